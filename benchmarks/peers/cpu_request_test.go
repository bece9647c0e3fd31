package peers

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
)

// TestPeersSameRequest checks that the three implementations the benchmarks
// compare send the same request: the same table and item (12 attributes plus
// a 16-byte write token, version held+1) and the same condition (version =
// held) once placeholders are replaced by what they stand for; for Load, the
// same GetItem and the same decoded value. The one documented difference:
// guregu cannot ask for ALL_OLD on a failed condition.
func TestPeersSameRequest(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)

	t.Run("Put", func(t *testing.T) {
		saved, err := mapperPut(ctx, fx.mapper, item())
		if err != nil {
			t.Fatal(err)
		}
		mine := fx.stub.lastPut
		p := item()
		if err := handPut(ctx, fx.stub, &p); err != nil {
			t.Fatal(err)
		}
		hand := fx.stub.lastPut
		g := gItem()
		if err := gureguPut(ctx, fx.gtable, &g); err != nil {
			t.Fatal(err)
		}
		gur := fx.stub.lastPut
		if mine == nil || mine == hand || hand == gur {
			t.Fatal("the stub did not see three requests")
		}
		if saved.Version != 4 || p.Version != 4 || g.Version != 4 {
			t.Errorf("versions after the put: mapper %d, hand-written %d, guregu %d; want 4", saved.Version, p.Version, g.Version)
		}
		want := describePut(t, mine)
		t.Logf("mapper: %s", want)
		// The one extra clause: a put carries a stored window of
		// idempotency keys over (docs/idempotency.md), so it expects none;
		// the peers have no such window.
		const idem = " AND attribute_not_exists ddbkit_idem"
		if !strings.HasSuffix(want.cond, idem) {
			t.Errorf("mapper condition %q does not expect the window absent: update the documented difference", want.cond)
		}
		want.cond = strings.TrimSuffix(want.cond, idem)
		if len(want.item) != 12 {
			t.Errorf("mapper item has %d attributes besides the token, want 12: %s", len(want.item), want)
		}
		if want.item["version"] != "N:4" || want.cond != "version = N:3" || want.allOld != true {
			t.Errorf("mapper request: %s; want version N:4, condition version = N:3, ALL_OLD", want)
		}
		if got := describePut(t, hand); !reflect.DeepEqual(got, want) {
			t.Errorf("hand-written request differs:\n got  %s\n want %s", got, want)
		}
		got := describePut(t, gur)
		if got.allOld {
			t.Error("guregu asked for ALL_OLD: update the documented difference")
		}
		got.allOld = true // the one difference: guregu has no option for it
		if !reflect.DeepEqual(got, want) {
			t.Errorf("guregu request differs:\n got  %s\n want %s", got, want)
		}
	})

	t.Run("Load", func(t *testing.T) {
		id := item().ID
		mine, err := fx.mapper.Load(ctx, profile{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		mreq := fx.stub.lastGet
		hand, err := handLoad(ctx, fx.stub, id)
		if err != nil {
			t.Fatal(err)
		}
		hreq := fx.stub.lastGet
		gur, err := gureguLoad(ctx, fx.gtable, id)
		if err != nil {
			t.Fatal(err)
		}
		greq := fx.stub.lastGet
		if mreq == nil || mreq == hreq || hreq == greq {
			t.Fatal("the stub did not see three requests")
		}
		// The mapper asks for the attributes the type models (a narrow type
		// reads only those) and its write token; for this type that is
		// every attribute of the item, the same result as the others'
		// requests without a projection.
		if names := slices.Sorted(maps.Values(mreq.ExpressionAttributeNames)); mreq.ProjectionExpression != nil {
			stored, _ := attributevalue.MarshalMapWithOptions(item(), func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" })
			stored["ddbkit_wt"] = nil
			if all := slices.Sorted(maps.Keys(stored)); !slices.Equal(names, all) {
				t.Errorf("the mapper projects %v, want every attribute %v", names, all)
			}
			m := *mreq
			m.ProjectionExpression, m.ExpressionAttributeNames = nil, nil
			mreq = &m
		}
		want := describeGet(mreq)
		for name, r := range map[string]*dynamodb.GetItemInput{"hand-written": hreq, "guregu": greq} {
			if got := describeGet(r); got != want {
				t.Errorf("%s GetItem %s, mapper %s", name, got, want)
			}
		}
		if !reflect.DeepEqual(mine, item()) || !reflect.DeepEqual(hand, item()) || !reflect.DeepEqual(gur, gItem()) {
			t.Errorf("decoded:\n mapper       %+v\n hand-written %+v\n guregu       %+v\n want         %+v", mine, hand, gur, item())
		}
	})
}

// putRequest is a PutItemInput with its placeholders resolved.
type putRequest struct {
	table  string
	item   map[string]string // attribute → type:value, without the token
	cond   string
	allOld bool
	retVal types.ReturnValue // "" is NONE
}

func (r putRequest) String() string {
	keys := slices.Sorted(maps.Keys(r.item))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + r.item[k]
	}
	return fmt.Sprintf("table %s, item {%s}, condition %q, ALL_OLD %v, ReturnValues %q", r.table, strings.Join(parts, " "), r.cond, r.allOld, r.retVal)
}

func describePut(t *testing.T, in *dynamodb.PutItemInput) putRequest {
	t.Helper()
	r := putRequest{table: aws.ToString(in.TableName), item: map[string]string{},
		allOld: in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld,
		retVal: in.ReturnValues}
	if r.retVal == types.ReturnValueNone {
		r.retVal = ""
	}
	for k, v := range in.Item {
		if k == dynamo.DefaultWriteTokenAttribute {
			if b, ok := v.(*types.AttributeValueMemberB); !ok || len(b.Value) != 16 {
				t.Errorf("write token %s, want 16 bytes", fmtAV(v))
			}
			continue
		}
		r.item[k] = fmtAV(v)
	}
	if _, ok := in.Item[dynamo.DefaultWriteTokenAttribute]; !ok {
		t.Error("no write token in the item")
	}
	r.cond = resolve(t, aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	return r
}

func describeGet(in *dynamodb.GetItemInput) string {
	keys := slices.Sorted(maps.Keys(in.Key))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + fmtAV(in.Key[k])
	}
	return fmt.Sprintf("table %s key {%s} consistent %v projection %q names %v", aws.ToString(in.TableName),
		strings.Join(parts, " "), aws.ToBool(in.ConsistentRead), aws.ToString(in.ProjectionExpression), in.ExpressionAttributeNames)
}

var placeholderRE = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// resolve replaces every placeholder of expr by what it stands for, fails on
// an undefined or unused one, and drops parentheses and extra spaces (guregu
// wraps its conditions in parentheses).
func resolve(t *testing.T, expr string, names map[string]string, values map[string]types.AttributeValue) string {
	t.Helper()
	used := map[string]bool{}
	out := placeholderRE.ReplaceAllStringFunc(expr, func(ph string) string {
		used[ph] = true
		if ph[0] == '#' {
			n, ok := names[ph]
			if !ok {
				t.Errorf("name placeholder %s of %q undefined", ph, expr)
			}
			return n
		}
		v, ok := values[ph]
		if !ok {
			t.Errorf("value placeholder %s of %q undefined", ph, expr)
		}
		return fmtAV(v)
	})
	for ph := range names {
		if !used[ph] {
			t.Errorf("name placeholder %s unused in %q", ph, expr)
		}
	}
	for ph := range values {
		if !used[ph] {
			t.Errorf("value placeholder %s unused in %q", ph, expr)
		}
	}
	out = strings.NewReplacer("(", " ", ")", " ").Replace(out)
	return strings.Join(strings.Fields(out), " ")
}

func fmtAV(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("B:%x", v.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL:%v", v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		return "SS:" + strings.Join(slices.Sorted(slices.Values(v.Value)), ",")
	case *types.AttributeValueMemberNS:
		return "NS:" + strings.Join(slices.Sorted(slices.Values(v.Value)), ",")
	case *types.AttributeValueMemberM:
		keys := slices.Sorted(maps.Keys(v.Value))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + fmtAV(v.Value[k])
		}
		return "M:{" + strings.Join(parts, " ") + "}"
	case *types.AttributeValueMemberL:
		parts := make([]string, len(v.Value))
		for i, e := range v.Value {
			parts[i] = fmtAV(e)
		}
		return "L:[" + strings.Join(parts, " ") + "]"
	default:
		return fmt.Sprintf("%T", v)
	}
}
