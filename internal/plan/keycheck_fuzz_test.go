package plan

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
)

// kcFuzzOps are the comparisons the fuzzed conditions use, by number.
var kcFuzzOps = [...]string{"=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"}

// kcFuzzTerm writes term i of a fuzzed key condition: the name #i, the
// comparison op%len(kcFuzzOps), the values :i and (BETWEEN) :ib of kind
// (0 S, 1 N, else B) and text v.
func kcFuzzTerm(i int, op, kind uint8, v string, names map[string]string, values map[string]types.AttributeValue, name string) string {
	n, o := fmt.Sprintf("#%d", i), kcFuzzOps[int(op)%len(kcFuzzOps)]
	names[n] = name
	var av types.AttributeValue
	switch kind % 3 {
	case 0:
		av = &types.AttributeValueMemberS{Value: v}
	case 1:
		av = &types.AttributeValueMemberN{Value: v}
	default:
		av = &types.AttributeValueMemberB{Value: []byte(v)}
	}
	vp := fmt.Sprintf(":%d", i)
	values[vp], values[vp+"b"] = av, av
	switch o {
	case "BETWEEN":
		return n + " BETWEEN " + vp + " AND " + vp + "b"
	case "begins_with":
		return "begins_with (" + n + ", " + vp + ")"
	}
	return n + " " + o + " " + vp
}

// FuzzQueryKeyCondition: the key condition check over arbitrary names,
// comparisons and values never panics, refuses only with ErrInvalidInput,
// answers the same twice, and what it accepts on the table (whose keys it
// knows) places each term once: the partition key fixed with Equal to a
// string, the sort key compared with a number.
func FuzzQueryKeyCondition(f *testing.F) {
	f.Add("p", uint8(0), uint8(0), "a", "n", uint8(5), uint8(1), "1", true, false)
	f.Add("p", uint8(0), uint8(0), "a", "n", uint8(6), uint8(1), "1", true, false)
	f.Add("p", uint8(1), uint8(0), "a", "p", uint8(0), uint8(0), "b", true, false)
	f.Add("owner", uint8(0), uint8(0), "a", "", uint8(0), uint8(0), "", false, true)
	f.Add("P", uint8(0), uint8(2), "\xff", "n", uint8(3), uint8(1), "1e126", true, false)
	f.Add("n", uint8(0), uint8(1), "NaN", "p", uint8(0), uint8(0), "", true, true)
	f.Fuzz(func(t *testing.T, n1 string, op1, k1 uint8, v1, n2 string, op2, k2 uint8, v2 string, two, onIndex bool) {
		r := kcRules(t)
		names, values := map[string]string{}, map[string]types.AttributeValue{}
		expr := kcFuzzTerm(0, op1, k1, v1, names, values, n1)
		if two {
			expr = "(" + expr + ") AND (" + kcFuzzTerm(1, op2, k2, v2, names, values, n2) + ")"
		}
		index := ""
		if onIndex {
			index = "byOwner"
		}
		kc, err := r.CheckKeyCondition("Query", index, expr, names, values)
		kc2, err2 := r.CheckKeyCondition("Query", index, expr, names, values)
		if fmt.Sprint(err) != fmt.Sprint(err2) || (kc == nil) != (kc2 == nil) {
			t.Fatalf("%s: %v, then %v", expr, err, err2)
		}
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidInput) || kc != nil {
				t.Fatalf("%s: %v (%v)", expr, err, kc)
			}
			return
		}
		if kc == nil {
			return // not a condition this package reads
		}
		if !reflect.DeepEqual(kc.Terms, kc2.Terms) || len(kc.Hash) != len(kc2.Hash) || len(kc.Rng) != len(kc2.Rng) {
			t.Fatalf("%s: placed %v %v, then %v %v", expr, kc.Hash, kc.Rng, kc2.Hash, kc2.Rng)
		}
		hashName, hashKind := "p", byte('S')
		if onIndex {
			hashName = "owner"
		}
		if len(kc.Hash) != 1 || kc.Hash[0].Name != hashName || kc.Hash[0].Op != "=" || KindOf(kc.Hash[0].Values[0]) != hashKind {
			t.Fatalf("%s accepted, partition terms %v", expr, kc.Hash)
		}
		if len(kc.Hash)+len(kc.Rng) != len(kc.Terms) {
			t.Fatalf("%s accepted, %d terms placed of %d", expr, len(kc.Hash)+len(kc.Rng), len(kc.Terms))
		}
		for _, rt := range kc.Rng {
			if onIndex || rt.Name != "n" || KindOf(rt.Values[0]) != 'N' {
				t.Fatalf("%s accepted, sort term %v", expr, rt)
			}
		}
	})
}
