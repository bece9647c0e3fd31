package condexpr

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// TestParseBuilderOutput: whatever the expression package builds, Parse
// reads, and finds every value.
func TestParseBuilderOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"b", "d", "doc.flag", "docs[1].flag", "a.b", "x", "mb.t"}
	var gen func(depth int) expression.ConditionBuilder
	gen = func(depth int) expression.ConditionBuilder {
		nm := expression.Name(names[rng.IntN(len(names))])
		v := expression.Value(rng.IntN(3) == 0)
		if depth > 0 {
			switch rng.IntN(4) {
			case 0:
				return expression.And(gen(depth-1), gen(depth-1))
			case 1:
				return expression.Or(gen(depth-1), gen(depth-1), gen(depth-1))
			case 2:
				return expression.Not(gen(depth - 1))
			}
		}
		switch rng.IntN(12) {
		case 0:
			return nm.Equal(v)
		case 1:
			return nm.NotEqual(v)
		case 2:
			return nm.LessThan(v)
		case 3:
			return nm.GreaterThanEqual(v)
		case 4:
			return nm.Between(v, expression.Value(true))
		case 5:
			return nm.In(v, expression.Value(false), expression.Value(true))
		case 6:
			return nm.BeginsWith("x")
		case 7:
			return nm.Contains("x")
		case 8:
			return nm.AttributeExists()
		case 9:
			return nm.AttributeType(expression.Boolean)
		case 10:
			return nm.Size().LessThan(expression.Value(3))
		}
		return nm.Equal(expression.Name("x"))
	}
	for i := 0; i < 500; i++ {
		e, err := expression.NewBuilder().WithCondition(gen(rng.IntN(4))).Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(*e.Condition())
		if err != nil {
			t.Fatalf("Parse(%q): %v", *e.Condition(), err)
		}
		seen := map[string]bool{}
		for _, g := range p.Groups {
			for _, op := range g.Operands {
				if op.Value != "" {
					seen[op.Value] = true
				}
			}
		}
		if len(seen) != len(e.Values()) {
			t.Fatalf("Parse(%q) found values %v, want %d", *e.Condition(), seen, len(e.Values()))
		}
	}
}

// TestParseDeep: deep nesting parses up to DynamoDB's size limit and is
// refused, not a crash, beyond.
func TestParseDeep(t *testing.T) {
	ok := strings.Repeat("(", 1500) + "#0 = :0" + strings.Repeat(")", 1500)
	if _, err := Parse(ok); err != nil {
		t.Errorf("1500 levels: %v", err)
	}
	deep := strings.Repeat("NOT (", 1<<20) + "#0 = :0" + strings.Repeat(")", 1<<20)
	if _, err := Parse(deep); !errors.Is(err, ErrSyntax) {
		t.Errorf("a million levels: %v, want ErrSyntax", err)
	}
}

// TestParseGroups: each comparison, BETWEEN, IN and function is one group
// with its operator and operands; Conjunction holds only without OR and NOT.
func TestParseGroups(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want string // groups rendered by render
		conj bool
	}{
		{"#0 = :0", "=(#0 :0)", true},
		{"(#0 = :0) AND (#1 BETWEEN :1 AND :2)", "=(#0 :0) BETWEEN(#1 :1 :2)", true},
		{"begins_with (#0, :0)", "begins_with(#0 :0)", true},
		{"#0.#1[2] IN (:0, :1) OR size (#2) >= :3", "IN(#0.#1[2] :0 :1) >=(_ :3)", false},
		{"NOT attribute_exists (#0)", "attribute_exists(#0)", false},
		{":0 < #0 and #0 <> #1", "<(:0 #0) <>(#0 #1)", true},
	} {
		p, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.expr, err)
		}
		if got := render(p); got != tc.want || p.Conjunction != tc.conj {
			t.Errorf("Parse(%q) = %s (conjunction %v), want %s (%v)", tc.expr, got, p.Conjunction, tc.want, tc.conj)
		}
	}
	for _, bad := range []string{"", "#0", "#0 = ", "#0 = = :0", "#0 ! :0", "#0 IN ()", "#0.", "#0[x] = :0", "(#0 = :0", "# = :0", "#0 BETWEEN :0 OR :1"} {
		if _, err := Parse(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax", bad, err)
		}
	}
}

// TestParseTree: ParseTree gives the boolean structure DynamoDB evaluates —
// NOT binds tighter than AND, AND tighter than OR, parentheses group — with
// leaves numbered as Groups, and size(path) keeps its path; Parse builds no
// tree.
func TestParseTree(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"#0 = :0", "g0"},
		{"#0 = :0 OR #1 = :1 AND #2 = :2", "OR(g0 AND(g1 g2))"},
		{"(#0 = :0 OR #1 = :1) AND NOT #2 = :2", "AND(OR(g0 g1) NOT(g2))"},
		{"attribute_not_exists (#0) OR attribute_type (#0, :0) OR #0 = :1", "OR(g0 g1 g2)"},
		{"NOT NOT (begins_with (#0, :0))", "NOT(NOT(g0))"},
		{"size (#0.#1) >= :3", "g0"},
	} {
		p, err := ParseTree(tc.expr)
		if err != nil {
			t.Fatalf("ParseTree(%q): %v", tc.expr, err)
		}
		if got := treeString(p.Tree); got != tc.want {
			t.Errorf("ParseTree(%q).Tree = %s, want %s", tc.expr, got, tc.want)
		}
		if q, _ := Parse(tc.expr); q.Tree != nil || render(q) != render(p) {
			t.Errorf("Parse(%q) built a tree or other groups: %s", tc.expr, render(q))
		}
	}
	p, _ := ParseTree("size (#0.#1) >= :3")
	if sz := p.Groups[0].Operands[0].Size; sz == nil || pathString(sz) != "#0.#1" {
		t.Errorf("size operand path = %v, want #0.#1", sz)
	}
}

func treeString(n *Node) string {
	if n == nil {
		return "<nil>"
	}
	if n.Op == "" {
		return "g" + string(rune('0'+n.Group))
	}
	var kids []string
	for _, k := range n.Kids {
		kids = append(kids, treeString(k))
	}
	return n.Op + "(" + strings.Join(kids, " ") + ")"
}

// render writes the groups of p: op(operand …) …; a path as its
// placeholders, a size(...) operand as _.
func render(p *Expr) string {
	var out []string
	for _, g := range p.Groups {
		op := g.Op
		if g.Fn != "" {
			op = g.Fn
		}
		var ops []string
		for _, o := range g.Operands {
			switch {
			case o.Path != nil:
				ops = append(ops, pathString(o.Path))
			case o.Value != "":
				ops = append(ops, o.Value)
			default:
				ops = append(ops, "_")
			}
		}
		out = append(out, op+"("+strings.Join(ops, " ")+")")
	}
	return strings.Join(out, " ")
}

func pathString(p *Path) string {
	var b strings.Builder
	for i, s := range p.Segs {
		switch {
		case p.Index[i]:
			b.WriteString("[" + s.Text + "]")
		case i > 0:
			b.WriteString("." + s.Text)
		default:
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// TestUsedNames: the name placeholders of all expressions, none from one
// that does not tokenize.
func TestUsedNames(t *testing.T) {
	got := UsedNames("#0 = :0 AND #1.#2 = :1", "#3 < :2", "#9 ! :0")
	want := map[string]bool{"#0": true, "#1": true, "#2": true, "#3": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UsedNames = %v, want %v", got, want)
	}
}

// FuzzParse: any string is tokenized and parsed without a panic, and:
// tokens are the expression's own bytes, in order; a parsed expression
// accounts for every placeholder (each value token is one operand of a
// group, each name token one step of a path, each path's span its own
// text); and rendering the tokens again (one space between them) parses to
// the same groups, paths and conjunction — the parse depends on the tokens
// alone, not on spacing.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"#0 = :0",
		"(#0.#1 = :0) AND (#2[2].#3 BETWEEN :1 AND :2) AND (#4 IN (:3, :4, :5)) AND (NOT (begins_with (#5, :6))) AND ((contains (#6, :7)) OR (size (#7) > :8) OR (attribute_type (#8, :9)) OR (attribute_exists (#9))) AND (#0 = #1) AND (#10 < :10)",
		"#0 <> :0 OR #0 <= :1",
		"attribute_not_exists (#0)",
		"((((#0 >= :0))))",
		"#0[1][2].#1 = :0",
		"NOT NOT #0 = :0",
		"#0 IN ()",
		"#0.",
		"(#0 = :0) AND (#1 BETWEEN :1 AND :2)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks, terr := Tokenize(s)
		last := 0
		for _, tk := range toks {
			if tk.Start < last || tk.End <= tk.Start || tk.End > len(s) || s[tk.Start:tk.End] != tk.Text {
				t.Fatalf("Tokenize(%q): token %+v is not the expression's bytes after %d", s, tk, last)
			}
			last = tk.End
		}
		p, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) = %v, not ErrSyntax", s, err)
			}
			return
		}
		if terr != nil {
			t.Fatalf("Parse(%q) succeeded where Tokenize failed: %v", s, terr)
		}
		values, names := 0, 0
		for _, tk := range toks {
			switch tk.Kind {
			case Value:
				values++
			case Name:
				names++
			}
		}
		for _, g := range p.Groups {
			for _, o := range g.Operands {
				if o.Value != "" {
					values--
				}
			}
			if g.Fn == "" && g.Op == "" || g.Fn != "" && g.Op != "" {
				t.Fatalf("Parse(%q): group %+v has neither or both of Fn and Op", s, g)
			}
		}
		prev := 0
		for _, cp := range p.Paths {
			if cp.Start < prev || cp.End > len(s) || cp.Start != cp.Segs[0].Start || cp.End < cp.Segs[len(cp.Segs)-1].End {
				t.Fatalf("Parse(%q): path %+v out of place", s, cp)
			}
			prev = cp.End
			for i, seg := range cp.Segs {
				if cp.Index[i] != (seg.Kind == Digits) || i == 0 && seg.Kind != Name {
					t.Fatalf("Parse(%q): path step %d %+v", s, i, seg)
				}
				if seg.Kind == Name {
					names--
				}
			}
		}
		if values != 0 || names != 0 {
			t.Fatalf("Parse(%q): %d value and %d name placeholders not accounted for", s, values, names)
		}
		texts := make([]string, len(toks))
		for i, tk := range toks {
			texts[i] = tk.Text
		}
		again := strings.Join(texts, " ")
		q, err := Parse(again)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its tokens %q: %v", s, again, err)
		}
		if render(p) != render(q) || p.Conjunction != q.Conjunction || len(p.Paths) != len(q.Paths) {
			t.Fatalf("Parse(%q) = %s, its tokens %q = %s", s, render(p), again, render(q))
		}
	})
}
