package schema

import (
	"encoding/base64"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/condexpr"
)

// Conditions and filters on attributes the mapper stores its own way.
//
// expression.Value encodes a Go value with attributevalue's defaults: a bool
// as BOOL, a time.Time as an RFC 3339 string. A javabool attribute is stored
// as the number 1 or 0 and a javadate one as "2006-01-02T15:04:05.000Z", so
// `expression.Name("paid").Equal(expression.Value(true))` would compare N 1
// with BOOL true and match nothing. The built expression is only a string
// with placeholders, so this file reads that string (the small grammar of
// DynamoDB condition expressions, as the expression package writes it,
// parsed by internal/condexpr),
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

// rewriteCond returns expr, names and values as they must be sent for a
// table of schema s: values compared with javabool and javadate attributes
// encoded as those attributes are stored, and expression.Name("a.b") made
// the top-level attribute "a.b" where the type has it (see above). names and
// values may be modified (they come fresh from expression.Builder.Build);
// the attribute values in values are not (they may be the caller's). others
// are the request's other expressions that share names (a key condition):
// a name placeholder they use is kept. A value that cannot be converted is
// an error saying what to pass instead.
//
// It works in phases over one parse (condexpr.Parse): the paths naming
// dotted attributes are rewritten (undotPaths), the comparisons whose
// values need converting are found (condComparisons), and their values are
// converted (convertCondValues).
func (s *Schema) RewriteCond(expr string, names map[string]string, values map[string]types.AttributeValue, others ...string) (string, map[string]string, error) {
	hasDots := s.hasDottedNames()
	if len(s.JavaFields) == 0 && !hasDots && !s.hasText {
		return expr, names, nil
	}
	p, err := condexpr.Parse(expr)
	if err != nil {
		if err := s.unreadableCond(expr, names); err != nil {
			return "", nil, err
		}
		return expr, names, nil
	}
	if hasDots {
		expr, names = s.undotPaths(expr, p, names, others)
	}
	cmps, err := s.condComparisons(p, names, values)
	if err != nil {
		return "", nil, err
	}
	if err := convertCondValues(cmps, values); err != nil {
		return "", nil, err
	}
	return expr, names, nil
}

// hasDottedNames reports whether an attribute of s has a dot in its name.
func (s *Schema) hasDottedNames() bool {
	for i := range s.Fields {
		if strings.IndexByte(s.Fields[i].Name, '.') >= 0 {
			return true
		}
	}
	return false
}

// unreadableCond is the error for expr, which condexpr cannot read: nil
// unless it names an attribute whose values would need converting.
func (s *Schema) unreadableCond(expr string, names map[string]string) error {
	for _, name := range names {
		if i, ok := s.ByName[name]; ok && (s.Fields[i].Conv != nil && s.Fields[i].Conv.condLive() || HoldsText(s.Fields[i].Type)) {
			return fmt.Errorf("%s names attribute %q, whose values the mapper converts, but cannot be read to convert them: build it with the expression package", strconv.Quote(Truncate(expr, 40)), name)
		}
	}
	return nil
}

// undotPaths rewrites the paths of p that name a top-level attribute with a
// dot in its name (#0.#1 for "a.b", where s has "a.b" and no "a") to one new
// placeholder, in p and in the text, and drops the names neither expr nor
// others use any more (DynamoDB refuses unused ones).
func (s *Schema) undotPaths(expr string, p *condexpr.Expr, names map[string]string, others []string) (string, map[string]string) {
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	dotted := map[string]string{} // attribute name → new placeholder
	for _, cp := range p.Paths {
		if len(cp.Segs) < 2 {
			continue
		}
		if _, ok := s.ByName[names[cp.Segs[0].Text]]; ok {
			continue // a top-level attribute of that name exists: a path it is
		}
		joined := names[cp.Segs[0].Text]
		for k := 1; k < len(cp.Segs) && !cp.Index[k]; k++ {
			joined += "." + names[cp.Segs[k].Text]
			if _, ok := s.ByName[joined]; !ok {
				continue
			}
			ph, ok := dotted[joined]
			if !ok {
				ph = "#dot" + strconv.Itoa(len(dotted))
				dotted[joined] = ph
			}
			edits = append(edits, edit{cp.Start, cp.Segs[k].End, ph})
			cp.Segs = append([]condexpr.Token{{Kind: condexpr.Name, Text: ph}}, cp.Segs[k+1:]...)
			cp.Index = append([]bool{false}, cp.Index[k+1:]...)
			break
		}
	}
	if len(edits) == 0 {
		return expr, names
	}
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
	used := condexpr.UsedNames(append([]string{expr}, others...)...)
	for ph := range names {
		if !used[ph] {
			delete(names, ph)
		}
	}
	return expr, names
}

// condTarget is what a path of a condition reaches, for converting the
// values compared with it: the javabool/javadate conversion there (nil when
// none), the Go type holding text types there (nil when none), and the
// path as text for messages ("" when nothing there converts).
type condTarget struct {
	conv *javaConv
	text reflect.Type
	attr string
}

// target resolves path cp (with names) against s.
func (s *Schema) target(cp *condexpr.Path, names map[string]string) condTarget {
	i, ok := s.ByName[names[cp.Segs[0].Text]]
	if !ok {
		return condTarget{}
	}
	c := s.Fields[i].Conv
	for k := 1; c != nil && k < len(cp.Segs); k++ {
		c = c.step(cp.Index[k], names[cp.Segs[k].Text])
	}
	if c != nil && !c.condLive() {
		c = nil
	}
	var tt reflect.Type
	if s.hasText && HoldsText(s.Fields[i].Type) {
		tt = s.Fields[i].Type
		for k := 1; tt != nil && k < len(cp.Segs); k++ {
			tt = textStep(tt, cp.Index[k], names[cp.Segs[k].Text])
		}
		if tt != nil && !HoldsText(tt) {
			tt = nil
		}
	}
	if c == nil && tt == nil {
		return condTarget{}
	}
	return condTarget{c, tt, pathText(cp, names)}
}

// condCmp is one value placeholder to convert: compared (by fn, as in
// javaConv.condValue) with target to.
type condCmp struct {
	value string
	fn    string
	to    condTarget
}

// condComparisons finds the value placeholders of p compared (by =, <>, <,
// <=, >, >=, BETWEEN, IN, contains or begins_with) with an attribute whose
// values convert, each once, with what it is compared with; an ordering
// comparison of a text type with a value to convert is refused
// (checkTextOrdering). A placeholder
// compared with attributes stored differently cannot be converted for both:
// an error.
func (s *Schema) condComparisons(p *condexpr.Expr, names map[string]string, values map[string]types.AttributeValue) ([]condCmp, error) {
	var cmps []condCmp
	done := map[string]string{} // value placeholder → the attribute it was compared with
	for _, g := range p.Groups {
		switch g.Fn {
		case "", "contains", "begins_with":
		default:
			continue // attribute_exists, attribute_not_exists, attribute_type: nothing compared
		}
		var to condTarget
		ti := -1
		for i, op := range g.Operands {
			if op.Path == nil {
				continue
			}
			if to = s.target(op.Path, names); to.attr != "" {
				ti = i
				break
			}
		}
		if err := checkTextOrdering(&g, ti, to, values); err != nil {
			return nil, err
		}
		for _, op := range g.Operands {
			if op.Value == "" {
				continue
			}
			if prev, ok := done[op.Value]; ok {
				if prev != to.attr {
					return nil, fmt.Errorf("value %s is compared with both %s and %s, which store values differently: use a separate expression.Value for each",
						FormatAV(values[op.Value], 80), orOther(prev), orOther(to.attr))
				}
				continue
			}
			done[op.Value] = to.attr
			if _, ok := values[op.Value]; ok && to.attr != "" {
				cmps = append(cmps, condCmp{op.Value, g.Fn, to})
			}
		}
	}
	return cmps, nil
}

// checkTextOrdering refuses g, an ordering comparison (<, <=, >, >=,
// BETWEEN) of to, an attribute holding a text type (g's operand ti), with anything but
// strings (or NULL) the caller gives: the attribute holds the text
// MarshalText returns, and DynamoDB orders strings character by character,
// which is not the order of the type's values in general ("99" >= "100",
// "10.0.0.9" > "10.0.0.10"). A string the caller gives is the caller's
// own text comparison.
func checkTextOrdering(g *condexpr.Group, ti int, to condTarget, values map[string]types.AttributeValue) error {
	if !g.Ordering() || to.text == nil || !codec.IsText(DerefType(to.text)) {
		return nil
	}
	for i, op := range g.Operands {
		if i == ti {
			continue // the attribute itself
		}
		if av, ok := values[op.Value]; ok && op.Value != "" {
			switch av.(type) {
			case *types.AttributeValueMemberS, *types.AttributeValueMemberNULL:
				continue
			}
		}
		what := g.Op
		if what != "BETWEEN" {
			what = "the comparison " + what
		}
		return fmt.Errorf("%s on %q (a %s, stored as its MarshalText text) compares characters: store it as a number or use =, <> or IN; see docs/mapper.md, Text types",
			what, to.attr, to.text)
	}
	return nil
}

// convertCondValues replaces each value of cmps in values by the value as
// its attribute stores it; the values themselves are not modified.
func convertCondValues(cmps []condCmp, values map[string]types.AttributeValue) error {
	for _, c := range cmps {
		av := values[c.value]
		nv, err := av, error(nil)
		if c.to.conv != nil {
			nv, err = c.to.conv.condValue(c.fn, nv)
		}
		if err == nil && c.to.text != nil {
			nv, err = TextCondValue(c.to.text, c.fn, nv)
		}
		if err != nil {
			return fmt.Errorf("the value %s compared with attribute %s: %w", FormatAV(av, 80), c.to.attr, err)
		}
		values[c.value] = nv
	}
	return nil
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
			return JavaBoolAV(v.Value), nil
		case *types.AttributeValueMemberN:
			if _, err := ParseJavaBool(v.Value); err != nil {
				return nil, fmt.Errorf("a javabool attribute holds 1 (true) or 0 (false): pass expression.Value(true) or dynamo.JavaBool(b)")
			}
			return av, nil
		}
		return nil, fmt.Errorf("a javabool attribute holds 1 (true) or 0 (false), never a %s: pass expression.Value(true) or dynamo.JavaBool(b)", AVKind(av))
	case convDate:
		if c.plainTime {
			return av, nil
		}
		v, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			return nil, fmt.Errorf("a javadate attribute holds a string like %q, never a %s: pass a time.Time or dynamo.JavaDate(t)", JavaDateLayout, AVKind(av))
		}
		t, err := time.Parse(time.RFC3339Nano, v.Value)
		if err != nil {
			if fn != "" {
				return av, nil // a prefix or part of the stored string: the caller's to write
			}
			return nil, fmt.Errorf("a javadate attribute holds a string like %q: pass a time.Time or dynamo.JavaDate(t)", JavaDateLayout)
		}
		return JavaDateAV(t), nil
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

func AVKind(av types.AttributeValue) string {
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
func pathText(cp *condexpr.Path, names map[string]string) string {
	var b strings.Builder
	for k, t := range cp.Segs {
		switch {
		case cp.Index[k]:
			b.WriteString("[" + t.Text + "]")
		case k > 0:
			b.WriteString("." + nameText(names, t.Text))
		default:
			b.WriteString(nameText(names, t.Text))
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
		if !condexpr.IsWordByte(n[i]) {
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
func ReadableCond(expr string, names map[string]string, values map[string]types.AttributeValue) string {
	toks, err := condexpr.Tokenize(expr)
	if err != nil {
		return expr
	}
	var b strings.Builder
	last := 0
	for _, t := range toks {
		var repl string
		switch t.Kind {
		case condexpr.Name:
			repl = nameText(names, t.Text)
		case condexpr.Value:
			av, ok := values[t.Text]
			if !ok {
				continue
			}
			repl = FormatAV(av, 60)
		default:
			continue
		}
		b.WriteString(expr[last:t.Start])
		b.WriteString(repl)
		last = t.End
	}
	b.WriteString(expr[last:])
	return b.String()
}

// formatAV renders an attribute value for messages, cut to about max bytes.
func FormatAV(av types.AttributeValue, max int) string {
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
		b.WriteString(FormatScalar(av))
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

func FormatScalar(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return strconv.Quote(v.Value)
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberB:
		return "b64:" + base64.StdEncoding.EncodeToString(v.Value)
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case nil:
		return "<unset>"
	default:
		return fmt.Sprintf("%T", av)
	}
}

// javaDateAV returns t as a javadate attribute stores it: a string in
// JavaDateLayout, UTC, milliseconds.
func JavaDateAV(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberS{Value: t.UTC().Format(JavaDateLayout)}
}
