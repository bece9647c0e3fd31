package plan

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/schema"
)

// The builder writes each clause's separators and the clauses in the order
// SET, REMOVE, ADD, DELETE, whatever order the actions come in.
func TestExprBuilderClauses(t *testing.T) {
	var eb ExprBuilder
	if u := eb.update(); u != "" {
		t.Fatalf("empty builder: update %q, want none", u)
	}
	eb.AddTo(ClauseDelete, "#f", ":f")
	eb.Remove("#c")
	eb.Set("#a", ":a")
	eb.AddTo(ClauseAdd, "#e", ":e")
	eb.SetIfAbsent("#b", ":b")
	eb.Remove("#d")
	eb.AddTo(ClauseDelete, "#g", ":g")
	want := "SET #a = :a, #b = if_not_exists(#b, :b) REMOVE #c, #d ADD #e :e DELETE #f :f, #g :g"
	if u := eb.update(); u != want {
		t.Errorf("update = %q\n want %q", u, want)
	}
	var only ExprBuilder
	only.Remove("#x")
	if u := only.update(); u != "REMOVE #x" {
		t.Errorf("update = %q, want %q", u, "REMOVE #x")
	}
}

// Conditions are ANDed in the order given, each parenthesised; an empty one
// adds nothing; the If conditions come last, with their names and values.
// A shared names map is copied before it is changed.
func TestExprBuilderCondAndNames(t *testing.T) {
	shared := map[string]string{"#v": "version"}
	eb := ExprBuilder{Names: shared, Values: map[string]types.AttributeValue{}}
	eb.And("", map[string]string{"#unused": "x"})
	eb.And("#v = :v0", nil)
	if eb.cond != "#v = :v0" {
		t.Fatalf("cond = %q", eb.cond)
	}
	eb.And("attribute_exists(#k)", map[string]string{"#k": "id"})
	eb.Name("#n", "name")
	eb.Values[":v0"] = n("1")
	uc := &UserCond{Expr: "#0 = :0", Names: map[string]string{"#0": "state"}, Values: map[string]types.AttributeValue{":0": str("open")}}
	cond, names, values := eb.finish(uc)
	if want := "((#v = :v0) AND (attribute_exists(#k))) AND (#0 = :0)"; cond != want {
		t.Errorf("cond = %q\n want %q", cond, want)
	}
	if want := map[string]string{"#v": "version", "#k": "id", "#n": "name", "#0": "state"}; !maps.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if len(values) != 2 || values[":0"] == nil || values[":v0"] == nil {
		t.Errorf("values = %v", values)
	}
	if !maps.Equal(shared, map[string]string{"#v": "version"}) {
		t.Errorf("the shared names map was changed: %v", shared)
	}

	// Nothing at all: no condition, nil names and values (the SDK refuses
	// empty maps).
	var none ExprBuilder
	if cond, names, values := none.finish(nil); cond != "" || names != nil || values != nil {
		t.Errorf("empty builder = %q, %v, %v", cond, names, values)
	}
}

// The expressions of a save, for each SaveBehavior: what every request of
// that behaviour sends (save_test.go checks the requests as sent).
func TestSaveExpressions(t *testing.T) {
	p := testPlan[Book](t)
	item := map[string]types.AttributeValue{"ISBN": str("1"), "title": str("T"), "authors": &types.AttributeValueMemberSS{Value: []string{"a"}}, "note": &types.AttributeValueMemberNULL{Value: true}}
	tok := []byte("0123456789abcdef")
	for _, tc := range []struct {
		b          SaveBehavior
		held, next int64
		update     string
		cond       string
		names      []string
	}{
		{SaveUpdate, 0, 1, "SET #a1 = :a1, #a2 = :a2, #a4 = :v1, #wt = :wt REMOVE #a3", "attribute_not_exists(#a4) OR attribute_type(#a4, :onull) OR #a4 = :v0", []string{"#a1", "#a2", "#a3", "#a4", "#wt"}},
		{SaveUpdate, 2, 3, "SET #a1 = :a1, #a2 = :a2, #a4 = :v1, #wt = :wt REMOVE #a3", "#a4 = :v0", []string{"#a1", "#a2", "#a3", "#a4", "#wt"}},
		{SaveUpdateSkipNulls, 2, 3, "SET #a1 = :a1, #a2 = :a2, #a4 = :v1, #wt = :wt", "#a4 = :v0", []string{"#a1", "#a2", "#a4", "#wt"}},
		{SaveAppendSet, 2, 3, "SET #a1 = :a1, #a4 = :v1, #wt = :wt ADD #a2 :a2", "(NOT attribute_type(#a2, :onull)) AND (#a4 = :v0)", []string{"#a1", "#a2", "#a4", "#wt"}},
		{SaveClobber, 2, 1, "SET #a1 = :a1, #a2 = :a2, #wt = :wt REMOVE #a3 ADD #a4 :v1", "attribute_not_exists(#a4) OR (#a4 >= :vz AND #a4 < :vm)", []string{"#a1", "#a2", "#a3", "#a4", "#wt"}},
	} {
		up := p.BuildUpdate(tc.b, item, tc.held, tc.next, nil, tok, nil, nil, nil, 0)
		if up.Update != tc.update || up.Cond != tc.cond {
			t.Errorf("%v held %d: update %q cond %q\n want update %q cond %q", tc.b, tc.held, up.Update, up.Cond, tc.update, tc.cond)
		}
		if got := sortedKeys(up.Names); !reflect.DeepEqual(got, tc.names) {
			t.Errorf("%v: names %v, want %v", tc.b, got, tc.names)
		}
	}

	// SavePut (and Delete): the version condition alone, or none.
	if pc := p.BuildPutCond(0, false, nil, nil); pc.Cond != "attribute_not_exists(#a4) OR attribute_type(#a4, :onull) OR #a4 = :v0" || !maps.Equal(pc.Names, map[string]string{"#a4": "version"}) {
		t.Errorf("put of an unsaved item: %+v", pc)
	}
	if pc := p.BuildPutCond(3, false, nil, nil); pc.Cond != "#a4 = :v0" || !reflect.DeepEqual(pc.Values, map[string]types.AttributeValue{":v0": n("3")}) {
		t.Errorf("put of version 3: %+v", pc)
	}
	if pc := p.BuildPutCond(3, true, nil, nil); pc.Cond != "" || pc.Names != nil || pc.Values != nil {
		t.Errorf("clobber put: %+v", pc)
	}
	// Pinned to the stored item it was computed from: the token's
	// condition is ANDed after the version's.
	bs := &Basis{Item: map[string]types.AttributeValue{"ISBN": str("1"), "ddbkit_wt": &types.AttributeValueMemberB{Value: tok}}}
	if pc := p.BuildPutCond(3, false, nil, bs); pc.Cond != "(#a4 = :v0) AND (#wt = :wh)" || pc.Names["#wt"] != "ddbkit_wt" {
		t.Errorf("put pinned to its basis: %+v", pc)
	}
	if up := p.BuildUpdate(SaveUpdate, item, 3, 4, nil, tok, nil, bs, nil, 0); up.Cond != "(#a4 = :v0) AND (#wt = :wh)" {
		t.Errorf("update pinned to its basis: cond %q", up.Cond)
	}
}

// The value of the version held (":v0") is the basis item's own only when
// the basis holds the held version as that very text; another spelling of
// the number, another number, another type or no basis gets a value of its
// own, holding the held version's text. NumberAV's text reads as strconv
// writes it.
func TestHeldVersionValueSharedOnlyWhenSameText(t *testing.T) {
	p := testPlan[Book](t)
	for _, held := range []int64{0, 7, 99, 100, 123456, math.MaxInt64, -1, math.MinInt64} {
		if got := NumberAV(held).Value; got != strconv.FormatInt(held, 10) {
			t.Errorf("numberAV(%d) = %q", held, got)
		}
	}
	own := n("123")
	for _, tc := range []struct {
		stored types.AttributeValue // nil: no basis
		shared bool
	}{
		{own, true},
		{n("1.23e2"), false},
		{n("0123"), false},
		{n("124"), false},
		{str("123"), false},
		{nil, false},
	} {
		var bs *Basis
		if tc.stored != nil {
			bs = &Basis{Item: map[string]types.AttributeValue{"ISBN": str("1"), "version": tc.stored}}
		}
		values := map[string]types.AttributeValue{}
		p.versionCond(123, bs, values)
		got := values[":v0"].(*types.AttributeValueMemberN)
		if got.Value != "123" || (got == tc.stored) != tc.shared {
			t.Errorf("basis version %v: :v0 %q (the basis's own: %v), want \"123\" (shared: %v)", tc.stored, got.Value, got == tc.stored, tc.shared)
		}
	}
}

// A version that starts elsewhere than its step is advanced by SET with
// if_not_exists, not ADD, on condition that the stored version is not 0
// (unsaved: it gets the first version, in a request of its own); the values
// used are the step, the base, the bound of condClobber and the 0.
func TestAdvanceVersion(t *testing.T) {
	type started struct {
		ID string `dynamo:"id,hash"`
		V  int32  `dynamo:"v,version,versionstart=100,versionstep=10"`
	}
	p := testPlan[started](t)
	eb := ExprBuilder{Values: map[string]types.AttributeValue{}}
	eb.Set("#x", ":x")
	if c := p.AdvanceVersion(&eb, p.FirstVersion(0), false); c != "("+p.condClobber+") AND NOT #a1 = :vz" {
		t.Errorf("condition = %q, want condClobber and not 0", c)
	}
	if u := eb.update(); u != "SET #x = :x, #a1 = if_not_exists(#a1, :vb) + :v1" {
		t.Errorf("update = %q", u)
	}
	want := map[string]types.AttributeValue{":v1": n("10"), ":vb": n("90"), ":vm": n("2147483638"), ":vz": n("0")}
	if !reflect.DeepEqual(eb.Values, want) {
		t.Errorf("values = %v, want %v", eb.Values, want)
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// exprOptional models six attributes that may be missing (nil pointers,
// NULL when saved) and a creation time, besides its key and version.
type exprOptional struct {
	ID      string    `dynamo:"id,hash"`
	A       *string   `dynamo:"a"`
	B       *string   `dynamo:"b"`
	Made    time.Time `dynamo:"made,created"`
	C       *string   `dynamo:"c"`
	D       *string   `dynamo:"d"`
	E       *string   `dynamo:"e"`
	F       *string   `dynamo:"f"`
	Version int64     `dynamo:"version,version"`
}

// A SaveUpdate's UpdateExpression, which the plan caches by the set of
// attributes the item lacks (saveUpdateExpr), is for every such set what
// the actions say: SET of each attribute held (the creation time only if
// absent), of the version and the token, REMOVE of the others, in the
// type's order — with more sets than the cache has slots, asked for by
// several goroutines at once (run with -race).
func TestSaveUpdateExpressionPerMissingSet(t *testing.T) {
	p := testPlan[exprOptional](t)
	opt := []string{"a", "b", "made", "c", "d", "e", "f"}
	ph := map[string]string{}
	for _, f := range p.S.Fields {
		ph[f.Name] = f.NamePH
	}
	want := func(mask int) (map[string]types.AttributeValue, string) {
		item := map[string]types.AttributeValue{"id": str("k"), "version": n("3")}
		var set, remove []string
		for i, name := range opt {
			if mask&(1<<i) != 0 {
				if i%2 == 0 {
					item[name] = &types.AttributeValueMemberNULL{Value: true} // NULL counts as missing
				}
				remove = append(remove, ph[name])
				continue
			}
			item[name] = str("v")
			if name == "made" {
				set = append(set, ph[name]+" = if_not_exists("+ph[name]+", :"+ph[name][1:]+")")
			} else {
				set = append(set, ph[name]+" = :"+ph[name][1:])
			}
		}
		set = append(set, ph["version"]+" = :v1", "#wt = :wt")
		u := "SET " + strings.Join(set, ", ")
		if len(remove) > 0 {
			u += " REMOVE " + strings.Join(remove, ", ")
		}
		return item, u
	}
	tok := []byte("0123456789abcdef")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for m := range 1 << len(opt) {
					mask := (m + g*17 + round*5) % (1 << len(opt))
					item, u := want(mask)
					up := p.BuildUpdate(SaveUpdate, item, 3, 4, nil, tok, nil, nil, nil, 0)
					if up.Update != u {
						t.Errorf("missing %07b: update %q\n want %q", mask, up.Update, u)
						return
					}
					if up.Cond != ph["version"]+" = :v0" {
						t.Errorf("missing %07b: cond %q", mask, up.Cond)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// Book is a versioned type with a set and an optional attribute.
type Book struct {
	ISBN    string   `dynamo:"ISBN,hash"`
	Title   string   `dynamo:"title"`
	Authors []string `dynamo:"authors,set,omitempty"`
	Note    *string  `dynamo:"note"`
	Version int64    `dynamo:"version,version"`
}

// testPlan returns the plan of T with the mapper's default write token
// attribute.
func testPlan[T any](t *testing.T) *Plan {
	t.Helper()
	s, err := schema.For(reflect.TypeFor[T]())
	if err != nil {
		t.Fatal(err)
	}
	return NewPlan(s, "ddbkit_wt")
}

func n(s string) *types.AttributeValueMemberN   { return &types.AttributeValueMemberN{Value: s} }
func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

// An update's new version and its write token are one allocation (and the
// version's text another): they are stored, and remembered, together.
// Without a token attribute, the version alone.
func TestVersionAndTokenAllocatedTogether(t *testing.T) {
	p, tok := testPlan[Book](t), []byte("tok")
	v, b := p.VersionAndToken(12345, tok)
	if v.Value != "12345" || b == nil || string(b.Value) != "tok" {
		t.Fatalf("VersionAndToken: %q, %v", v.Value, b)
	}
	if a := testing.AllocsPerRun(100, func() { p.VersionAndToken(12345, tok) }); a != 2 {
		t.Errorf("VersionAndToken: %v allocations, want 2", a)
	}
	p.TokenAttr = ""
	if v, b := p.VersionAndToken(7, tok); v.Value != "7" || b != nil {
		t.Errorf("no token attribute: %q, %v", v.Value, b)
	}
}
