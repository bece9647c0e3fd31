// Package condexpr reads DynamoDB condition expressions — conditions,
// filters and key conditions — as the expression package writes them:
// "#0 = :0", "(#0.#1 BETWEEN :1 AND :2) AND (begins_with (#2, :3))", with
// names and values in placeholders. It is pure logic, with no I/O and no
// knowledge of tables or Go types: it finds the comparisons and the document
// paths in an expression, and where each lies in the text, so that the
// mapper can check them, convert the values compared and rewrite the paths.
//
// The grammar is DynamoDB's:
//
//	condition := and (OR and)*
//	and       := not (AND not)*
//	not       := NOT not | primary
//	primary   := ( condition ) | function ( operands )
//	           | operand comparator operand
//	           | operand BETWEEN operand AND operand
//	           | operand IN ( operand (, operand)* )
//	operand   := size ( path ) | :value | path
//	path      := #name ( . #name | [ digits ] )*
//
// Names and values appear only as placeholders (#name, :value), which is
// all the expression package writes.
package condexpr

import (
	"errors"
	"strings"
)

// ErrSyntax is returned for an expression that is not one of the grammar.
var ErrSyntax = errors.New("dynamo: unreadable condition expression")

// MaxDepth bounds the nesting the parser follows. DynamoDB takes
// expressions of up to 4 KB, so deeper ones cannot be sent anyway.
const MaxDepth = 4096

// Token kinds (Token.Kind); the punctuation ( ) , . [ ] is its own kind.
const (
	Name       byte = 'n' // #name placeholder
	Value      byte = 'v' // :value placeholder
	Ident      byte = 'i' // a word: a keyword or function name
	Digits     byte = 'd' // a list index
	Comparator byte = 'c' // = <> < <= > >=
)

// Token is one token of an expression.
type Token struct {
	Kind       byte
	Text       string
	Start, End int // byte offsets in the expression: Text is s[Start:End]
}

// Tokenize splits an expression into tokens; ErrSyntax for a byte that
// starts none.
func Tokenize(s string) ([]Token, error) {
	var toks []Token
	for i := 0; i < len(s); {
		c := s[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#' || c == ':':
			i++
			for i < len(s) && IsWordByte(s[i]) {
				i++
			}
			if i == start+1 {
				return nil, ErrSyntax
			}
			kind := Name
			if c == ':' {
				kind = Value
			}
			toks = append(toks, Token{kind, s[start:i], start, i})
			continue
		case c >= '0' && c <= '9':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			toks = append(toks, Token{Digits, s[start:i], start, i})
			continue
		case IsWordByte(c):
			for i < len(s) && IsWordByte(s[i]) {
				i++
			}
			toks = append(toks, Token{Ident, s[start:i], start, i})
			continue
		case c == '(' || c == ')' || c == ',' || c == '.' || c == '[' || c == ']':
			toks = append(toks, Token{c, s[i : i+1], i, i + 1})
			i++
			continue
		case c == '=':
			i++
		case c == '<':
			i++
			if i < len(s) && (s[i] == '=' || s[i] == '>') {
				i++
			}
		case c == '>':
			i++
			if i < len(s) && s[i] == '=' {
				i++
			}
		default:
			return nil, ErrSyntax
		}
		toks = append(toks, Token{Comparator, s[start:i], start, i})
	}
	return toks, nil
}

// IsWordByte reports whether c may appear in a word or placeholder.
func IsWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Path is a document path: a name placeholder followed by .name and [index]
// steps.
type Path struct {
	Segs       []Token // the name and digit tokens, in order
	Index      []bool  // Index[i]: Segs[i] is a list index
	Start, End int     // byte span in the expression
}

// Operand is a path, a value placeholder, or size of a path.
type Operand struct {
	Path  *Path
	Value string // ":x", or ""
	Size  *Path  // the path of size(path); Path and Value are then empty
}

// Group is one comparison, BETWEEN, IN or function call: the paths and
// values in it relate to each other.
type Group struct {
	Fn       string // "" for comparisons, BETWEEN and IN; else the function name, lower case
	Op       string // the comparator ("=", "<>", "<", "<=", ">", ">="), "BETWEEN" or "IN"; "" for a function
	Operands []Operand
}

// Ordering reports whether g orders its operands: <, <=, >, >= or BETWEEN.
func (g *Group) Ordering() bool {
	switch g.Op {
	case "<", "<=", ">", ">=", "BETWEEN":
		return true
	}
	return false
}

// Expr is a parsed expression: its groups and paths, left to right. It is
// not a tree: Conjunction tells whether the groups are joined by AND alone.
type Expr struct {
	Groups []Group
	Paths  []*Path // every path, in order of Start (including those in size(...))
	// Conjunction is true when no OR or NOT appears: the expression holds
	// exactly when every group does.
	Conjunction bool
	// Tree is the boolean structure of the groups, set by ParseTree only
	// (Parse does not allocate it).
	Tree *Node
}

// Node is one node of Expr.Tree: an AND or OR of its Kids, a NOT of its one
// kid, or a leaf standing for Expr.Groups[Group].
type Node struct {
	Op    string // "AND", "OR", "NOT", or "" for a leaf
	Kids  []*Node
	Group int
}

// parser is a recursive-descent parser of the grammar above.
type parser struct {
	toks  []Token
	pos   int
	e     Expr
	depth int
	tree  bool // build Expr.Tree
}

// Parse reads expression s; ErrSyntax when it is not one of the grammar or
// nests deeper than MaxDepth.
func Parse(s string) (*Expr, error) { return parse(s, false) }

// ParseTree is Parse that also sets Expr.Tree, for a caller that evaluates
// the expression.
func ParseTree(s string) (*Expr, error) { return parse(s, true) }

func parse(s string, tree bool) (*Expr, error) {
	toks, err := Tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, e: Expr{Conjunction: true}, tree: tree}
	root, err := p.condition()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, ErrSyntax
	}
	p.e.Tree = root
	return &p.e, nil
}

// join returns the node of op over kids: the one kid alone, nil when no
// tree is built.
func (p *parser) join(op string, kids []*Node) *Node {
	if !p.tree {
		return nil
	}
	if len(kids) == 1 {
		return kids[0]
	}
	return &Node{Op: op, Kids: kids}
}

// leaf returns the node of the group added last; nil when no tree is built.
func (p *parser) leaf() *Node {
	if !p.tree {
		return nil
	}
	return &Node{Group: len(p.e.Groups) - 1}
}

func (p *parser) peek() (Token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return Token{}, false
}

func (p *parser) isKeyword(word string) bool {
	t, ok := p.peek()
	return ok && t.Kind == Ident && strings.EqualFold(t.Text, word)
}

func (p *parser) expect(kind byte) error {
	t, ok := p.peek()
	if !ok || t.Kind != kind {
		return ErrSyntax
	}
	p.pos++
	return nil
}

// condition := and (OR and)*
func (p *parser) condition() (*Node, error) {
	if p.depth++; p.depth > MaxDepth {
		return nil, ErrSyntax
	}
	defer func() { p.depth-- }()
	n, err := p.and()
	if err != nil {
		return nil, err
	}
	var kids []*Node
	if p.tree {
		kids = []*Node{n}
	}
	for p.isKeyword("OR") {
		p.pos++
		p.e.Conjunction = false
		n, err := p.and()
		if err != nil {
			return nil, err
		}
		if p.tree {
			kids = append(kids, n)
		}
	}
	return p.join("OR", kids), nil
}

// and := not (AND not)*
func (p *parser) and() (*Node, error) {
	n, err := p.not()
	if err != nil {
		return nil, err
	}
	var kids []*Node
	if p.tree {
		kids = []*Node{n}
	}
	for p.isKeyword("AND") {
		p.pos++
		n, err := p.not()
		if err != nil {
			return nil, err
		}
		if p.tree {
			kids = append(kids, n)
		}
	}
	return p.join("AND", kids), nil
}

// not := NOT not | primary
func (p *parser) not() (*Node, error) {
	if p.isKeyword("NOT") {
		p.pos++
		p.e.Conjunction = false
		if p.depth++; p.depth > MaxDepth {
			return nil, ErrSyntax
		}
		defer func() { p.depth-- }()
		n, err := p.not()
		if err != nil || !p.tree {
			return nil, err
		}
		return &Node{Op: "NOT", Kids: []*Node{n}}, nil
	}
	return p.primary()
}

// primary := ( condition ) | function ( operands ) | operand comparator operand
// | operand BETWEEN operand AND operand | operand IN ( operand, ... )
func (p *parser) primary() (*Node, error) {
	t, ok := p.peek()
	if !ok {
		return nil, ErrSyntax
	}
	if t.Kind == '(' {
		p.pos++
		n, err := p.condition()
		if err != nil {
			return nil, err
		}
		return n, p.expect(')')
	}
	if t.Kind == Ident && !strings.EqualFold(t.Text, "size") {
		// A function that is a condition by itself.
		p.pos++
		ops, err := p.args()
		if err != nil {
			return nil, err
		}
		p.e.Groups = append(p.e.Groups, Group{Fn: strings.ToLower(t.Text), Operands: ops})
		return p.leaf(), nil
	}
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	g := Group{Operands: []Operand{left}}
	switch {
	case p.isKeyword("BETWEEN"):
		p.pos++
		lo, err := p.operand()
		if err != nil {
			return nil, err
		}
		if !p.isKeyword("AND") {
			return nil, ErrSyntax
		}
		p.pos++
		hi, err := p.operand()
		if err != nil {
			return nil, err
		}
		g.Op, g.Operands = "BETWEEN", append(g.Operands, lo, hi)
	case p.isKeyword("IN"):
		p.pos++
		ops, err := p.args()
		if err != nil {
			return nil, err
		}
		g.Op, g.Operands = "IN", append(g.Operands, ops...)
	default:
		c, _ := p.peek()
		if err := p.expect(Comparator); err != nil {
			return nil, err
		}
		right, err := p.operand()
		if err != nil {
			return nil, err
		}
		g.Op, g.Operands = c.Text, append(g.Operands, right)
	}
	p.e.Groups = append(p.e.Groups, g)
	return p.leaf(), nil
}

// args := ( operand (, operand)* )
func (p *parser) args() ([]Operand, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var ops []Operand
	for {
		op, err := p.operand()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		t, ok := p.peek()
		if !ok {
			return nil, ErrSyntax
		}
		p.pos++
		switch t.Kind {
		case ',':
			continue
		case ')':
			return ops, nil
		}
		return nil, ErrSyntax
	}
}

// operand := size ( path ) | :value | path
func (p *parser) operand() (Operand, error) {
	t, ok := p.peek()
	if !ok {
		return Operand{}, ErrSyntax
	}
	switch t.Kind {
	case Value:
		p.pos++
		return Operand{Value: t.Text}, nil
	case Ident:
		if !strings.EqualFold(t.Text, "size") {
			return Operand{}, ErrSyntax
		}
		p.pos++
		if err := p.expect('('); err != nil {
			return Operand{}, err
		}
		cp, err := p.path()
		if err != nil {
			return Operand{}, err
		}
		return Operand{Size: cp}, p.expect(')')
	case Name:
		cp, err := p.path()
		return Operand{Path: cp}, err
	}
	return Operand{}, ErrSyntax
}

// path := #name ( . #name | [ digits ] )*
func (p *parser) path() (*Path, error) {
	t, ok := p.peek()
	if !ok || t.Kind != Name {
		return nil, ErrSyntax
	}
	p.pos++
	cp := &Path{Segs: []Token{t}, Index: []bool{false}, Start: t.Start, End: t.End}
	for {
		t, ok := p.peek()
		if !ok {
			break
		}
		if t.Kind == '.' {
			p.pos++
			n, ok := p.peek()
			if !ok || n.Kind != Name {
				return nil, ErrSyntax
			}
			p.pos++
			cp.Segs, cp.Index, cp.End = append(cp.Segs, n), append(cp.Index, false), n.End
			continue
		}
		if t.Kind == '[' {
			p.pos++
			d, ok := p.peek()
			if !ok || d.Kind != Digits {
				return nil, ErrSyntax
			}
			p.pos++
			e, ok := p.peek()
			if !ok || e.Kind != ']' {
				return nil, ErrSyntax
			}
			p.pos++
			cp.Segs, cp.Index, cp.End = append(cp.Segs, d), append(cp.Index, true), e.End
			continue
		}
		break
	}
	p.e.Paths = append(p.e.Paths, cp)
	return cp, nil
}

// UsedNames returns the name placeholders the expressions use; an
// expression that does not tokenize adds none.
func UsedNames(exprs ...string) map[string]bool {
	used := map[string]bool{}
	for _, e := range exprs {
		toks, _ := Tokenize(e)
		for _, t := range toks {
			if t.Kind == Name {
				used[t.Text] = true
			}
		}
	}
	return used
}
