package dynamo

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Conditions and filters on attributes the mapper stores its own way.
//
// expression.Value encodes a Go value with attributevalue's defaults: a bool
// as BOOL, a time.Time as an RFC 3339 string. A javabool attribute is stored
// as the number 1 or 0 and a javadate one as "2006-01-02T15:04:05.000Z", so
// `expression.Name("paid").Equal(expression.Value(true))` would compare N 1
// with BOOL true and match nothing. The built expression is only a string
// with placeholders, so this file reads that string (the small grammar of
// DynamoDB condition expressions, as the expression package writes it),
// finds every value compared with a javabool or javadate attribute (by =,
// <>, <, <=, >, >=, BETWEEN, IN, contains and begins_with) and encodes it as
// the attribute is stored. A value that cannot be converted is an error that
// says what to pass instead.
//
// Values compared with attributes of text types — types the mapper stores as
// the string their MarshalText returns (codec.IsText: a uuid-style [16]byte,
// netip.Addr, net.IP, big.Int), also through pointers, as elements of lists,
// sets and maps, and as fields of documents — are converted too (condtext.go),
// in If conditions, filters and Query key conditions alike: a string (S) is
// sent as it is (it is taken to be the text already); a binary (B), which
// expression.Value makes of a byte array or []byte type, is turned back into
// a value of the attribute's type (an array only from as many bytes as it
// has) and sent as its MarshalText string, and so are a number (N) or bool
// of a text type of that kind, and a number a type like big.Int reads with
// its UnmarshalText. Anything else — the empty map expression.Value
// makes of a netip.Addr, whose fields are unexported — is an error wrapping
// ErrInvalidInput, before any request: compare with
// expression.Value(v.String()) (the text MarshalText returns) instead.
//
// It also makes expression.Name("a.b") mean the top-level attribute "a.b"
// when the table's type has an attribute named "a.b" and none named "a": the
// expression package reads the dot as a path a → b, which no item of the
// type can have.

// JavaBool returns b as a javabool attribute stores it (the number 1 or 0),
// for conditions and filters the mapper cannot convert by itself:
// expression.Value(dynamo.JavaBool(true)).
func JavaBool(b bool) types.AttributeValue { return javaBoolAV(b) }

// JavaDate returns t as a javadate attribute stores it (a string in
// JavaDateLayout, UTC, milliseconds), for conditions and filters the mapper
// cannot convert by itself: expression.Value(dynamo.JavaDate(t)).
func JavaDate(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberS{Value: t.UTC().Format(JavaDateLayout)}
}

// condTok is one token of a condition expression.
type condTok struct {
	kind       byte // 'n' #name, 'v' :value, 'i' identifier, 'd' digits, 'c' comparator, or the punctuation itself: ( ) , . [ ]
	text       string
	start, end int // byte offsets in the expression
}

var errCondSyntax = errors.New("dynamo: unreadable condition expression")

// maxCondDepth bounds the nesting the parser follows. DynamoDB takes
// expressions of up to 4 KB, so deeper ones cannot be sent anyway.
const maxCondDepth = 4096

// tokenizeCond splits a condition expression into tokens.
func tokenizeCond(s string) ([]condTok, error) {
	var toks []condTok
	for i := 0; i < len(s); {
		c := s[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#' || c == ':':
			i++
			for i < len(s) && isWordByte(s[i]) {
				i++
			}
			if i == start+1 {
				return nil, errCondSyntax
			}
			kind := byte('n')
			if c == ':' {
				kind = 'v'
			}
			toks = append(toks, condTok{kind, s[start:i], start, i})
			continue
		case c >= '0' && c <= '9':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			toks = append(toks, condTok{'d', s[start:i], start, i})
			continue
		case isWordByte(c):
			for i < len(s) && isWordByte(s[i]) {
				i++
			}
			toks = append(toks, condTok{'i', s[start:i], start, i})
			continue
		case c == '(' || c == ')' || c == ',' || c == '.' || c == '[' || c == ']':
			toks = append(toks, condTok{c, s[i : i+1], i, i + 1})
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
			return nil, errCondSyntax
		}
		toks = append(toks, condTok{'c', s[start:i], start, i})
	}
	return toks, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// condPath is a document path: a name placeholder followed by .name and
// [index] steps.
type condPath struct {
	segs       []condTok // the name and digit tokens, in order
	index      []bool    // index[i]: segs[i] is a list index
	start, end int       // byte span in the expression
}

// condOperand is a path, a value placeholder, or anything else (size(...)).
type condOperand struct {
	path  *condPath
	value string // ":x", or ""
}

// condGroup is one comparison, BETWEEN, IN or function call: the paths and
// values in it relate to each other.
type condGroup struct {
	fn       string // "" for comparisons, BETWEEN and IN; else the function name
	operands []condOperand
}

// condParser is a recursive-descent parser of DynamoDB condition
// expressions. It collects the groups and the paths; it does not build a
// tree.
type condParser struct {
	toks   []condTok
	pos    int
	groups []condGroup
	paths  []*condPath
	depth  int
}

func parseCond(s string) (*condParser, error) {
	toks, err := tokenizeCond(s)
	if err != nil {
		return nil, err
	}
	p := &condParser{toks: toks}
	if err := p.condition(); err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, errCondSyntax
	}
	return p, nil
}

func (p *condParser) peek() (condTok, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return condTok{}, false
}

func (p *condParser) isKeyword(word string) bool {
	t, ok := p.peek()
	return ok && t.kind == 'i' && strings.EqualFold(t.text, word)
}

func (p *condParser) expect(kind byte) error {
	t, ok := p.peek()
	if !ok || t.kind != kind {
		return errCondSyntax
	}
	p.pos++
	return nil
}

// condition := and (OR and)*
func (p *condParser) condition() error {
	if p.depth++; p.depth > maxCondDepth {
		return errCondSyntax
	}
	defer func() { p.depth-- }()
	if err := p.and(); err != nil {
		return err
	}
	for p.isKeyword("OR") {
		p.pos++
		if err := p.and(); err != nil {
			return err
		}
	}
	return nil
}

// and := not (AND not)*
func (p *condParser) and() error {
	if err := p.not(); err != nil {
		return err
	}
	for p.isKeyword("AND") {
		p.pos++
		if err := p.not(); err != nil {
			return err
		}
	}
	return nil
}

// not := NOT not | primary
func (p *condParser) not() error {
	if p.isKeyword("NOT") {
		p.pos++
		if p.depth++; p.depth > maxCondDepth {
			return errCondSyntax
		}
		defer func() { p.depth-- }()
		return p.not()
	}
	return p.primary()
}

// primary := ( condition ) | function ( operands ) | operand comparator operand
// | operand BETWEEN operand AND operand | operand IN ( operand, ... )
func (p *condParser) primary() error {
	t, ok := p.peek()
	if !ok {
		return errCondSyntax
	}
	if t.kind == '(' {
		p.pos++
		if err := p.condition(); err != nil {
			return err
		}
		return p.expect(')')
	}
	if t.kind == 'i' && !strings.EqualFold(t.text, "size") {
		// A function that is a condition by itself.
		p.pos++
		ops, err := p.args()
		if err != nil {
			return err
		}
		p.groups = append(p.groups, condGroup{fn: strings.ToLower(t.text), operands: ops})
		return nil
	}
	left, err := p.operand()
	if err != nil {
		return err
	}
	g := condGroup{operands: []condOperand{left}}
	switch {
	case p.isKeyword("BETWEEN"):
		p.pos++
		lo, err := p.operand()
		if err != nil {
			return err
		}
		if !p.isKeyword("AND") {
			return errCondSyntax
		}
		p.pos++
		hi, err := p.operand()
		if err != nil {
			return err
		}
		g.operands = append(g.operands, lo, hi)
	case p.isKeyword("IN"):
		p.pos++
		ops, err := p.args()
		if err != nil {
			return err
		}
		g.operands = append(g.operands, ops...)
	default:
		if err := p.expect('c'); err != nil {
			return err
		}
		right, err := p.operand()
		if err != nil {
			return err
		}
		g.operands = append(g.operands, right)
	}
	p.groups = append(p.groups, g)
	return nil
}

// args := ( operand (, operand)* )
func (p *condParser) args() ([]condOperand, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var ops []condOperand
	for {
		op, err := p.operand()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		t, ok := p.peek()
		if !ok {
			return nil, errCondSyntax
		}
		p.pos++
		switch t.kind {
		case ',':
			continue
		case ')':
			return ops, nil
		}
		return nil, errCondSyntax
	}
}

// operand := size ( path ) | :value | path
func (p *condParser) operand() (condOperand, error) {
	t, ok := p.peek()
	if !ok {
		return condOperand{}, errCondSyntax
	}
	switch t.kind {
	case 'v':
		p.pos++
		return condOperand{value: t.text}, nil
	case 'i':
		if !strings.EqualFold(t.text, "size") {
			return condOperand{}, errCondSyntax
		}
		p.pos++
		if err := p.expect('('); err != nil {
			return condOperand{}, err
		}
		if _, err := p.path(); err != nil {
			return condOperand{}, err
		}
		return condOperand{}, p.expect(')')
	case 'n':
		cp, err := p.path()
		return condOperand{path: cp}, err
	}
	return condOperand{}, errCondSyntax
}

// path := #name ( . #name | [ digits ] )*
func (p *condParser) path() (*condPath, error) {
	t, ok := p.peek()
	if !ok || t.kind != 'n' {
		return nil, errCondSyntax
	}
	p.pos++
	cp := &condPath{segs: []condTok{t}, index: []bool{false}, start: t.start, end: t.end}
	for {
		t, ok := p.peek()
		if !ok {
			break
		}
		if t.kind == '.' {
			p.pos++
			n, ok := p.peek()
			if !ok || n.kind != 'n' {
				return nil, errCondSyntax
			}
			p.pos++
			cp.segs, cp.index, cp.end = append(cp.segs, n), append(cp.index, false), n.end
			continue
		}
		if t.kind == '[' {
			p.pos++
			d, ok := p.peek()
			if !ok || d.kind != 'd' {
				return nil, errCondSyntax
			}
			p.pos++
			e, ok := p.peek()
			if !ok || e.kind != ']' {
				return nil, errCondSyntax
			}
			p.pos++
			cp.segs, cp.index, cp.end = append(cp.segs, d), append(cp.index, true), e.end
			continue
		}
		break
	}
	p.paths = append(p.paths, cp)
	return cp, nil
}

// rewriteCond returns expr, names and values as they must be sent for a
// table of schema s: values compared with javabool and javadate attributes
// encoded as those attributes are stored, and expression.Name("a.b") made
// the top-level attribute "a.b" where the type has it (see above). names and
// values may be modified (they come fresh from expression.Builder.Build);
// the attribute values in values are not (they may be the caller's). others
// are the request's other expressions that share names (a key condition):
// a name placeholder they use is kept. A value that cannot be converted is
// an error saying what to pass instead.
func (s *schema) rewriteCond(expr string, names map[string]string, values map[string]types.AttributeValue, others ...string) (string, map[string]string, error) {
	hasDots := false
	for i := range s.fields {
		if strings.IndexByte(s.fields[i].name, '.') >= 0 {
			hasDots = true
			break
		}
	}
	hasText := s.hasText
	if len(s.javaFields) == 0 && !hasDots && !hasText {
		return expr, names, nil
	}
	p, err := parseCond(expr)
	if err != nil {
		// Not what the expression package writes. Refuse only if it
		// names an attribute whose values would need converting.
		for _, name := range names {
			if i, ok := s.byName[name]; ok && (s.fields[i].conv != nil && s.fields[i].conv.condLive() || holdsText(s.fields[i].typ)) {
				return "", nil, fmt.Errorf("%q names attribute %q, whose values the mapper converts (javabool, javadate, text types), but the expression cannot be read to convert them: build it with the expression package", expr, name)
			}
		}
		return expr, names, nil
	}
	// Top-level attributes with a dot in the name.
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	dotted := map[string]string{} // attribute name → new placeholder
	for _, cp := range p.paths {
		if !hasDots || len(cp.segs) < 2 {
			continue
		}
		if _, ok := s.byName[names[cp.segs[0].text]]; ok {
			continue // a top-level attribute of that name exists: a path it is
		}
		joined := names[cp.segs[0].text]
		for k := 1; k < len(cp.segs) && !cp.index[k]; k++ {
			joined += "." + names[cp.segs[k].text]
			if _, ok := s.byName[joined]; !ok {
				continue
			}
			ph, ok := dotted[joined]
			if !ok {
				ph = "#dot" + strconv.Itoa(len(dotted))
				dotted[joined] = ph
			}
			edits = append(edits, edit{cp.start, cp.segs[k].end, ph})
			cp.segs = append([]condTok{{kind: 'n', text: ph}}, cp.segs[k+1:]...)
			cp.index = append([]bool{false}, cp.index[k+1:]...)
			break
		}
	}
	if len(edits) > 0 {
		var b strings.Builder
		last := 0
		for _, e := range edits { // in order: paths are collected left to right
			b.WriteString(expr[last:e.start])
			b.WriteString(e.text)
			last = e.end
		}
		b.WriteString(expr[last:])
		expr = b.String()
		for name, ph := range dotted {
			names[ph] = name
		}
		// Drop the names no expression uses any more: DynamoDB refuses
		// unused ones.
		used := map[string]bool{}
		for _, e := range append([]string{expr}, others...) {
			toks, _ := tokenizeCond(e)
			for _, t := range toks {
				if t.kind == 'n' {
					used[t.text] = true
				}
			}
		}
		for ph := range names {
			if !used[ph] {
				delete(names, ph)
			}
		}
	}
	// Values compared with javabool and javadate attributes, and with
	// attributes holding text types (condtext.go).
	resolve := func(cp *condPath) (*javaConv, reflect.Type, string) {
		name := names[cp.segs[0].text]
		i, ok := s.byName[name]
		if !ok {
			return nil, nil, ""
		}
		c := s.fields[i].conv
		for k := 1; c != nil && k < len(cp.segs); k++ {
			c = c.step(cp.index[k], names[cp.segs[k].text])
		}
		if c != nil && !c.condLive() {
			c = nil
		}
		var tt reflect.Type
		if hasText && holdsText(s.fields[i].typ) {
			tt = s.fields[i].typ
			for k := 1; tt != nil && k < len(cp.segs); k++ {
				tt = textStep(tt, cp.index[k], names[cp.segs[k].text])
			}
			if tt != nil && !holdsText(tt) {
				tt = nil
			}
		}
		if c == nil && tt == nil {
			return nil, nil, ""
		}
		return c, tt, pathText(cp, names)
	}
	// Each value placeholder is converted for the attribute it is compared
	// with; one compared with attributes stored differently cannot be.
	done := map[string]string{} // value placeholder → the attribute it was compared with
	for _, g := range p.groups {
		var conv *javaConv
		var text reflect.Type
		var attr string
		for _, op := range g.operands {
			if op.path == nil {
				continue
			}
			if c, tt, a := resolve(op.path); a != "" {
				conv, text, attr = c, tt, a
				break
			}
		}
		switch g.fn {
		case "", "contains", "begins_with":
		default:
			continue // attribute_exists, attribute_not_exists, attribute_type: nothing compared
		}
		for _, op := range g.operands {
			if op.value == "" {
				continue
			}
			if prev, ok := done[op.value]; ok {
				if prev != attr {
					return "", nil, fmt.Errorf("value %s is compared with both %s and %s, which store values differently: use a separate expression.Value for each",
						formatAV(values[op.value], 80), orOther(prev), orOther(attr))
				}
				continue
			}
			done[op.value] = attr
			av, ok := values[op.value]
			if !ok || attr == "" {
				continue
			}
			nv := av
			if conv != nil {
				nv, err = conv.condValue(g.fn, nv)
			}
			if err == nil && text != nil {
				nv, err = textCondValue(text, g.fn, nv)
			}
			if err != nil {
				return "", nil, fmt.Errorf("the value %s compared with attribute %s: %w", formatAV(av, 80), attr, err)
			}
			values[op.value] = nv
		}
	}
	return expr, names, nil
}

func orOther(attr string) string {
	if attr == "" {
		return "another attribute"
	}
	return attr
}

// step returns the conversion of the part of c's value that a path step
// reaches: a list element (index) or a map entry or document attribute
// (name); nil when nothing there converts.
func (c *javaConv) step(index bool, name string) *javaConv {
	switch c.kind {
	case convList:
		if index {
			return c.elem
		}
	case convMap:
		if !index {
			return c.elem
		}
	case convStruct:
		if !index {
			for _, f := range c.fields {
				if f.name == name {
					return f.conv
				}
			}
		}
	}
	return nil
}

// condLive reports whether a javabool or javadate value lies below c (an
// omitempty time does not count: its values are stored as attributevalue
// writes them).
func (c *javaConv) condLive() bool {
	switch c.kind {
	case convBool:
		return true
	case convDate:
		return !c.plainTime
	}
	return c.live
}

// condValue returns av, a value compared with an attribute of conversion c
// (by fn: "" for comparisons, "contains" or "begins_with"), as the attribute
// stores it: a new value, av itself when nothing changes. It never modifies
// av.
func (c *javaConv) condValue(fn string, av types.AttributeValue) (types.AttributeValue, error) {
	if _, null := av.(*types.AttributeValueMemberNULL); null {
		return av, nil
	}
	switch c.kind {
	case convBool:
		switch v := av.(type) {
		case *types.AttributeValueMemberBOOL:
			return javaBoolAV(v.Value), nil
		case *types.AttributeValueMemberN:
			if _, err := parseJavaBool(v.Value); err != nil {
				return nil, fmt.Errorf("a javabool attribute holds 1 (true) or 0 (false): compare it with expression.Value(true) or dynamo.JavaBool(b)")
			}
			return av, nil
		}
		return nil, fmt.Errorf("a javabool attribute holds the number 1 (true) or 0 (false), never a %s: compare it with expression.Value(true) or dynamo.JavaBool(b)", avKind(av))
	case convDate:
		if c.plainTime {
			return av, nil
		}
		v, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			return nil, fmt.Errorf("a javadate attribute holds a string like %q, never a %s: compare it with expression.Value(t) for a time.Time t, or dynamo.JavaDate(t)", JavaDateLayout, avKind(av))
		}
		t, err := time.Parse(time.RFC3339Nano, v.Value)
		if err != nil {
			if fn != "" {
				return av, nil // a prefix or part of the stored string: the caller's to write
			}
			return nil, fmt.Errorf("a javadate attribute holds a string like %q: compare it with expression.Value(t) for a time.Time t, or dynamo.JavaDate(t)", JavaDateLayout)
		}
		return JavaDate(t), nil
	case convList:
		if fn == "contains" {
			return c.elem.condValue("", av) // an element of the list
		}
		if l, ok := av.(*types.AttributeValueMemberL); ok {
			out := make([]types.AttributeValue, len(l.Value))
			for i, e := range l.Value {
				ne, err := c.elem.condValue("", e)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				out[i] = ne
			}
			return &types.AttributeValueMemberL{Value: out}, nil
		}
	case convMap:
		if m, ok := av.(*types.AttributeValueMemberM); ok {
			out := make(map[string]types.AttributeValue, len(m.Value))
			for k, e := range m.Value {
				ne, err := c.elem.condValue("", e)
				if err != nil {
					return nil, fmt.Errorf("[%q]: %w", k, err)
				}
				out[k] = ne
			}
			return &types.AttributeValueMemberM{Value: out}, nil
		}
	case convStruct:
		if m, ok := av.(*types.AttributeValueMemberM); ok {
			out := maps.Clone(m.Value)
			for _, f := range c.fields {
				if e, ok := m.Value[f.name]; ok && f.conv.condLive() {
					ne, err := f.conv.condValue("", e)
					if err != nil {
						return nil, fmt.Errorf(".%s: %w", f.name, err)
					}
					out[f.name] = ne
				}
			}
			return &types.AttributeValueMemberM{Value: out}, nil
		}
	}
	return av, nil
}

func avKind(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return "string (S)"
	case *types.AttributeValueMemberN:
		return "number (N)"
	case *types.AttributeValueMemberB:
		return "binary (B)"
	case *types.AttributeValueMemberBOOL:
		return "bool (BOOL)"
	case *types.AttributeValueMemberL:
		return "list (L)"
	case *types.AttributeValueMemberM:
		return "map (M)"
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		return "set"
	}
	return fmt.Sprintf("%T", av)
}

// pathText renders a path with its names: doc.flags[2].
func pathText(cp *condPath, names map[string]string) string {
	var b strings.Builder
	for k, t := range cp.segs {
		switch {
		case cp.index[k]:
			b.WriteString("[" + t.text + "]")
		case k > 0:
			b.WriteString("." + nameText(names, t.text))
		default:
			b.WriteString(nameText(names, t.text))
		}
	}
	return b.String()
}

// nameText renders an attribute name for messages: as it is when it is a
// plain word, else quoted (a name with a dot is one attribute, not a path).
func nameText(names map[string]string, ph string) string {
	n, ok := names[ph]
	if !ok {
		return ph
	}
	for i := 0; i < len(n); i++ {
		if !isWordByte(n[i]) {
			return strconv.Quote(n)
		}
	}
	if n == "" {
		return `""`
	}
	return n
}

// readableCond renders a condition expression with its names and values in
// place of the placeholders, for error messages: `paid = 1 AND total > 10`.
// It never fails: what it cannot read it leaves as it is.
func readableCond(expr string, names map[string]string, values map[string]types.AttributeValue) string {
	toks, err := tokenizeCond(expr)
	if err != nil {
		return expr
	}
	var b strings.Builder
	last := 0
	for _, t := range toks {
		var repl string
		switch t.kind {
		case 'n':
			repl = nameText(names, t.text)
		case 'v':
			av, ok := values[t.text]
			if !ok {
				continue
			}
			repl = formatAV(av, 60)
		default:
			continue
		}
		b.WriteString(expr[last:t.start])
		b.WriteString(repl)
		last = t.end
	}
	b.WriteString(expr[last:])
	return b.String()
}

// formatAV renders an attribute value for messages, cut to about max bytes.
func formatAV(av types.AttributeValue, max int) string {
	var b strings.Builder
	writeAV(&b, av, max)
	s := b.String()
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never split a character
		}
		s = s[:cut] + "…"
	}
	return s
}

func writeAV(b *strings.Builder, av types.AttributeValue, max int) {
	if b.Len() > max {
		return
	}
	switch v := av.(type) {
	case *types.AttributeValueMemberL:
		b.WriteByte('[')
		for i, e := range v.Value {
			if i > 0 {
				b.WriteString(", ")
			}
			writeAV(b, e, max)
		}
		b.WriteByte(']')
	case *types.AttributeValueMemberM:
		keys := make([]string, 0, len(v.Value))
		for k := range v.Value {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k) + ": ")
			writeAV(b, v.Value[k], max)
		}
		b.WriteByte('}')
	case *types.AttributeValueMemberSS:
		b.WriteString("SS")
		writeStrings(b, v.Value, true)
	case *types.AttributeValueMemberNS:
		b.WriteString("NS")
		writeStrings(b, v.Value, false)
	case *types.AttributeValueMemberBS:
		b.WriteString("BS(" + strconv.Itoa(len(v.Value)) + ")")
	default:
		b.WriteString(formatScalar(av))
	}
}

func writeStrings(b *strings.Builder, ss []string, quote bool) {
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		if quote {
			s = strconv.Quote(s)
		}
		b.WriteString(s)
	}
	b.WriteByte('}')
}
