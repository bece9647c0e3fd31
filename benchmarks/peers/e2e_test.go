package peers

// The cost of one request end to end: a versioned Save, a Load and an
// Update of the 12-attribute item through a real *dynamodb.Client whose HTTP
// client is an in-memory transport that answers every request at once. So
// the SDK's serialization, signing, middleware and response parsing are all
// counted; no server, no network. Three implementations side by side:
//
//   - impl=sdk: the floor, the SDK sending the very request the mapper sends
//     (recorded once from the mapper), its input built once;
//   - impl=mapper: Table.Save, Table.Load, Table.Update;
//   - impl=handwritten: attributevalue + expression code building the same
//     request on every call (and decoding the answer, for Load).
//
// BENCHMARKS.md ("The cost of one request, end to end") gives the command
// and the figures.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
)

// memHTTP answers every DynamoDB request at once with a canned success:
// GetItem with the stored item, the writes with an empty answer. It reads
// the request body, as a real transport would, and sets the CRC32 header
// DynamoDB sets (the SDK checks it).
type memHTTP struct {
	get, empty []byte
	getCRC     string
	emptyCRC   string
	requests   int
}

func newMemHTTP(tb testing.TB) *memHTTP {
	stored := item()
	m, err := attributevalue.MarshalMapWithOptions(&stored, encOpts)
	if err != nil {
		tb.Fatal(err)
	}
	inner := avJSON(&types.AttributeValueMemberM{Value: m}) // {"M":{...}}
	get := []byte(`{"Item":` + strings.TrimSuffix(strings.TrimPrefix(inner, `{"M":`), `}`) + `}`)
	if !json.Valid(get) {
		tb.Fatalf("invalid GetItem answer %s", get)
	}
	empty := []byte(`{}`)
	return &memHTTP{get: get, empty: empty,
		getCRC:   strconv.FormatUint(uint64(crc32.ChecksumIEEE(get)), 10),
		emptyCRC: strconv.FormatUint(uint64(crc32.ChecksumIEEE(empty)), 10)}
}

func (h *memHTTP) Do(r *http.Request) (*http.Response, error) {
	h.requests++
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body, crc := h.empty, h.emptyCRC
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetItem") {
		body, crc = h.get, h.getCRC
	}
	return &http.Response{
		StatusCode:    200,
		Status:        "200 OK",
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Crc32": {crc}, "X-Amzn-Requestid": {"REQ"}},
		ContentLength: int64(len(body)),
		Body:          io.NopCloser(bytes.NewReader(body)),
		Request:       r,
	}, nil
}

// avJSON renders v in DynamoDB's JSON (the types the item holds).
func avJSON(v types.AttributeValue) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return `{"S":` + q(v.Value) + `}`
	case *types.AttributeValueMemberN:
		return `{"N":` + q(v.Value) + `}`
	case *types.AttributeValueMemberB:
		return `{"B":` + q(base64.StdEncoding.EncodeToString(v.Value)) + `}`
	case *types.AttributeValueMemberBOOL:
		return `{"BOOL":` + strconv.FormatBool(v.Value) + `}`
	case *types.AttributeValueMemberNULL:
		return `{"NULL":true}`
	case *types.AttributeValueMemberSS:
		parts := make([]string, len(v.Value))
		for i, s := range v.Value {
			parts[i] = q(s)
		}
		return `{"SS":[` + strings.Join(parts, ",") + `]}`
	case *types.AttributeValueMemberM:
		parts := make([]string, 0, len(v.Value))
		for k, e := range v.Value {
			parts = append(parts, q(k)+":"+avJSON(e))
		}
		return `{"M":{` + strings.Join(parts, ",") + `}}`
	}
	panic(fmt.Sprintf("avJSON: %T", v))
}

// recorder is a real client that keeps a copy of the last GetItem and
// UpdateItem inputs the mapper sent: the floor sends them again.
type recorder struct {
	*dynamodb.Client
	lastGet    *dynamodb.GetItemInput
	lastUpdate *dynamodb.UpdateItemInput
}

func (r *recorder) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c := *in
	c.Key, c.ExpressionAttributeNames = maps.Clone(in.Key), maps.Clone(in.ExpressionAttributeNames)
	r.lastGet = &c
	return r.Client.GetItem(ctx, in, optFns...)
}

func (r *recorder) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c := *in
	c.Key, c.ExpressionAttributeNames, c.ExpressionAttributeValues = maps.Clone(in.Key), maps.Clone(in.ExpressionAttributeNames), maps.Clone(in.ExpressionAttributeValues)
	r.lastUpdate = &c
	return r.Client.UpdateItem(ctx, in, optFns...)
}

type e2eFixture struct {
	http   *memHTTP
	client *dynamodb.Client
	rec    *recorder
	mapper *dynamo.Table[profile] // over client
	probe  *dynamo.Table[profile] // over rec, to record the mapper's requests
}

func newE2E(tb testing.TB) *e2eFixture {
	h := newMemHTTP(tb)
	c := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://dynamodb.invalid"),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		HTTPClient:   h,
	})
	rec := &recorder{Client: c}
	mt, err := dynamo.NewTable[profile](dynamo.NewMapper(c), tableName)
	if err != nil {
		tb.Fatal(err)
	}
	pt, err := dynamo.NewTable[profile](dynamo.NewMapper(rec), tableName)
	if err != nil {
		tb.Fatal(err)
	}
	return &e2eFixture{http: h, client: c, rec: rec, mapper: mt, probe: pt}
}

// handUpdate builds the mapper's versioned UpdateItem by hand: SET of every
// attribute but the key, the version held+1 and a fresh write token, on
// condition version = held, ALL_OLD on failure.
func handUpdate(ctx context.Context, c *dynamodb.Client, p *profile) error {
	held := p.Version
	next := *p
	next.Version = held + 1
	av, err := attributevalue.MarshalMapWithOptions(&next, encOpts)
	if err != nil {
		return err
	}
	key := map[string]types.AttributeValue{"id": av["id"]}
	delete(av, "id")
	av[dynamo.DefaultWriteTokenAttribute] = &types.AttributeValueMemberB{Value: newToken()}
	var up expression.UpdateBuilder
	for k, v := range av {
		up = up.Set(expression.Name(k), expression.Value(v))
	}
	e, err := expression.NewBuilder().WithUpdate(up).
		WithCondition(expression.Name("version").Equal(expression.Value(held))).Build()
	if err != nil {
		return err
	}
	if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(tableName),
		Key:                                 key,
		UpdateExpression:                    e.Update(),
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}); err != nil {
		return err
	}
	p.Version = held + 1
	return nil
}

func handGet(ctx context.Context, c *dynamodb.Client, id string) (profile, error) {
	var p profile
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(tableName),
		Key:       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
	})
	if err != nil {
		return p, err
	}
	if out.Item == nil {
		return p, dynamo.ErrNotFound
	}
	err = attributevalue.UnmarshalMapWithOptions(out.Item, &p, decOpts)
	return p, err
}

func inc(p profile) (profile, error) { p.Logins++; return p, nil }

// TestE2ESameRequest checks what the end-to-end benchmarks compare: the
// mapper's Save and Update each send one UpdateItem and its Load one
// GetItem over the transport; the floor resends the recorded request; the
// hand-written Save sends an UpdateItem of the same attributes (placeholders
// resolved: every attribute set, the version condition, ALL_OLD), and the
// hand-written Load decodes the same value.
func TestE2ESameRequest(t *testing.T) {
	ctx := context.Background()
	fx := newE2E(t)
	count := func(f func() error) int {
		t.Helper()
		n := fx.http.requests
		if err := f(); err != nil {
			t.Fatal(err)
		}
		return fx.http.requests - n
	}
	p := item()
	if n := count(func() error { _, err := fx.mapper.Save(ctx, p); return err }); n != 1 {
		t.Errorf("mapper Save sent %d requests, want 1", n)
	}
	if n := count(func() error { _, err := fx.mapper.Load(ctx, p); return err }); n != 1 {
		t.Errorf("mapper Load sent %d requests, want 1", n)
	}
	// The first Update of a key reads it; then the Table remembers what it
	// stored, and each Update is one UpdateItem.
	if n := count(func() error { _, err := fx.mapper.Update(ctx, p, inc); return err }); n != 2 {
		t.Errorf("first mapper Update sent %d requests, want 2 (a read, a write)", n)
	}
	if n := count(func() error { _, err := fx.mapper.Update(ctx, p, inc); return err }); n != 1 {
		t.Errorf("mapper Update of a key it wrote sent %d requests, want 1", n)
	}

	if _, err := fx.probe.Save(ctx, p); err != nil {
		t.Fatal(err)
	}
	mine := fx.rec.lastUpdate
	want := describeUpdate(mine)
	t.Logf("mapper: %s", want)
	if n := count(func() error { return handUpdate(ctx, fx.client, &p) }); n != 1 {
		t.Errorf("hand-written Save sent %d requests, want 1", n)
	}
	hp := item()
	hand := recordHand(t, ctx, fx, &hp)
	if got := describeUpdate(hand); got != want {
		t.Errorf("hand-written UpdateItem differs:\n got  %s\n want %s", got, want)
	}
	if n := count(func() error { _, err := fx.client.UpdateItem(ctx, mine); return err }); n != 1 {
		t.Errorf("floor sent %d requests, want 1", n)
	}

	got, err := handGet(ctx, fx.client, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fx.mapper.Load(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(m) || fmt.Sprint(m) != fmt.Sprint(item()) {
		t.Errorf("decoded: hand-written %+v, mapper %+v, want %+v", got, m, item())
	}
}

// recordHand runs handUpdate against a client whose HTTP client captures
// the serialized request, and decodes it back into an UpdateItemInput.
func recordHand(t *testing.T, ctx context.Context, fx *e2eFixture, p *profile) *dynamodb.UpdateItemInput {
	t.Helper()
	var body []byte
	c := dynamodb.New(fx.client.Options(), func(o *dynamodb.Options) {
		o.HTTPClient = capture{next: fx.http, body: &body}
	})
	if err := handUpdate(ctx, c, p); err != nil {
		t.Fatal(err)
	}
	var in struct {
		TableName                           string
		Key                                 map[string]json.RawMessage
		UpdateExpression                    string
		ConditionExpression                 string
		ExpressionAttributeNames            map[string]string
		ExpressionAttributeValues           map[string]json.RawMessage
		ReturnValuesOnConditionCheckFailure string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	out := &dynamodb.UpdateItemInput{TableName: &in.TableName, UpdateExpression: &in.UpdateExpression,
		ConditionExpression: &in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure),
		Key:                                 map[string]types.AttributeValue{}, ExpressionAttributeValues: map[string]types.AttributeValue{}}
	for k, v := range in.Key {
		out.Key[k] = rawAV(v)
	}
	for k, v := range in.ExpressionAttributeValues {
		out.ExpressionAttributeValues[k] = rawAV(v)
	}
	return out
}

// rawAV keeps a serialized attribute value as a string attribute: describeUpdate
// compares them as text.
func rawAV(v json.RawMessage) types.AttributeValue {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	for typ, val := range m {
		return &types.AttributeValueMemberS{Value: "json:" + typ + ":" + string(val)}
	}
	return nil
}

type capture struct {
	next *memHTTP
	body *[]byte
}

func (c capture) Do(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	*c.body = b
	r.Body = io.NopCloser(bytes.NewReader(b))
	return c.next.Do(r)
}

// describeUpdate resolves an UpdateItem's placeholders: the attributes SET
// (names only: values are compared by the SDK-serialized test of the
// hand-written side), the condition, ALL_OLD.
func describeUpdate(in *dynamodb.UpdateItemInput) string {
	// Longest placeholders first, so that #n1 does not eat #n10.
	var olds []string
	for k, v := range in.ExpressionAttributeNames {
		olds = append(olds, k, v)
	}
	for k := range in.ExpressionAttributeValues {
		olds = append(olds, k, ":v")
	}
	pairs := make([][2]string, 0, len(olds)/2)
	for i := 0; i < len(olds); i += 2 {
		pairs = append(pairs, [2]string{olds[i], olds[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	resolve := func(s string) string {
		for _, p := range pairs {
			s = strings.ReplaceAll(s, p[0], "\x00"+p[1]+"\x00")
		}
		return strings.ReplaceAll(s, "\x00", "")
	}
	up := resolve(aws.ToString(in.UpdateExpression))
	up = strings.TrimPrefix(up, "SET ")
	sets := strings.Split(up, ",")
	for i := range sets {
		sets[i] = strings.TrimSpace(sets[i])
	}
	slices.Sort(sets)
	keys := make([]string, 0, len(in.Key))
	for k := range in.Key {
		keys = append(keys, k)
	}
	return fmt.Sprintf("table %s key %v set %v cond %q allold %v", aws.ToString(in.TableName), keys, sets,
		resolve(aws.ToString(in.ConditionExpression)), in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld)
}

// BenchmarkE2ESave: a versioned Save (UpdateItem) of the 12-attribute item.
func BenchmarkE2ESave(b *testing.B) {
	ctx := context.Background()
	fx := newE2E(b)
	p := item()
	if _, err := fx.probe.Save(ctx, p); err != nil {
		b.Fatal(err)
	}
	floor := fx.rec.lastUpdate
	runImpls(b,
		impl{"sdk", func() error { _, err := fx.client.UpdateItem(ctx, floor); return err }},
		impl{"mapper", func() error { _, err := fx.mapper.Save(ctx, p); return err }},
		impl{"handwritten", func() error { q := p; return handUpdate(ctx, fx.client, &q) }},
	)
}

// BenchmarkE2ELoad: a Load (GetItem) of the item, decoded (but for the floor).
func BenchmarkE2ELoad(b *testing.B) {
	ctx := context.Background()
	fx := newE2E(b)
	key := profile{ID: item().ID}
	if _, err := fx.probe.Load(ctx, key); err != nil {
		b.Fatal(err)
	}
	floor := fx.rec.lastGet
	runImpls(b,
		impl{"sdk", func() error { _, err := fx.client.GetItem(ctx, floor); return err }},
		impl{"mapper", func() error { _, err := fx.mapper.Load(ctx, key); return err }},
		impl{"handwritten", func() error { _, err := handGet(ctx, fx.client, key.ID); return err }},
	)
}

// BenchmarkE2EUpdate: an Update of a key the Table wrote last (one
// UpdateItem, no read), incrementing one attribute.
func BenchmarkE2EUpdate(b *testing.B) {
	ctx := context.Background()
	fx := newE2E(b)
	key := profile{ID: item().ID}
	for range 2 { // the first reads; the second is the shape measured
		if _, err := fx.probe.Update(ctx, key, inc); err != nil {
			b.Fatal(err)
		}
	}
	floor := fx.rec.lastUpdate
	if _, err := fx.mapper.Update(ctx, key, inc); err != nil {
		b.Fatal(err)
	}
	p := item()
	runImpls(b,
		impl{"sdk", func() error { _, err := fx.client.UpdateItem(ctx, floor); return err }},
		impl{"mapper", func() error { _, err := fx.mapper.Update(ctx, key, inc); return err }},
		impl{"handwritten", func() error { p.Logins++; q := p; return handUpdate(ctx, fx.client, &q) }},
	)
}
