package integration

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

func sortUUIDs(us []codectest.UUID) {
	slices.SortFunc(us, func(a, b codectest.UUID) int { return bytes.Compare(a[:], b[:]) })
}

// textDoc holds text types everywhere the mapper stores them: the hash key,
// a netip.Addr, a pointer, a set and map values.
type textDoc struct {
	ID      codectest.UUID            `dynamo:"id,hash"`
	Version int64                     `dynamo:"v,version"`
	Addr    netip.Addr                `dynamo:"addr"`
	Ref     *codectest.UUID           `dynamo:"ref"`
	Refs    []codectest.UUID          `dynamo:"refs,set"`
	ByName  map[string]codectest.UUID `dynamo:"byname"`
	Note    string                    `dynamo:"note"`
}

const (
	textID1 = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	textID2 = "123e4567-e89b-12d3-a456-426614174000"
	textID3 = "ffffffff-0000-4000-8000-00000000abcd"
)

func textFixture(t *testing.T, id string) textDoc {
	ref := codectest.MustUUID(textID2)
	return textDoc{ID: codectest.MustUUID(id), Addr: netip.MustParseAddr("2001:db8::7"), Ref: &ref,
		Refs:   []codectest.UUID{codectest.MustUUID(textID2), codectest.MustUUID(textID3)},
		ByName: map[string]codectest.UUID{"a": codectest.MustUUID(textID3)}, Note: "n"}
}

func sameTextDoc(t *testing.T, what string, got, want textDoc) {
	t.Helper()
	sortUUIDs(got.Refs)
	sortUUIDs(want.Refs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func rawByID(t *testing.T, client *dynamodb.Client, table string, id types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": id}})
	if err != nil || out.Item == nil {
		t.Fatalf("GetItem %v: %v (item %v)", id, err, out)
	}
	return out.Item
}

func sValue(t *testing.T, name string, av types.AttributeValue) string {
	t.Helper()
	s, ok := av.(*types.AttributeValueMemberS)
	if !ok {
		t.Fatalf("%s stored as %T (%v), want S", name, av, av)
	}
	return s.Value
}

// TestTextTypesDynamoDBLocal: against DynamoDB Local, a type whose hash key
// is a uuid-style [16]byte text type gets an S key from CreateTable; Save
// stores every text value as S (a set as SS); Load, BatchLoad, Query,
// Table.Current after a conflict, Transact and WriteTx read and write such
// items; an item written raw with S values (as Java writes a UUID) and one
// whose UUIDs are the B this mapper wrote before text types were stored as
// S both read.
func TestTextTypesDynamoDBLocal(t *testing.T) {
	db := dynamotest.Client(t)
	tb := newCreatedTable[textDoc](t)
	c := ctx(t)
	if err := tb.CreateTable(c); err != nil {
		t.Fatal(err)
	}
	desc, err := db.DescribeTable(c, &dynamodb.DescribeTableInput{TableName: aws.String(tb.Name())})
	if err != nil {
		t.Fatal(err)
	}
	if got := keySchemaString(desc.Table.KeySchema); got != "HASH id" {
		t.Errorf("key schema %s", got)
	}
	if ad := desc.Table.AttributeDefinitions; len(ad) != 1 || aws.ToString(ad[0].AttributeName) != "id" || ad[0].AttributeType != types.ScalarAttributeTypeS {
		t.Fatalf("attribute definitions %+v, want id S", ad)
	}

	// Save (versioned): the stored item holds S values and an SS.
	in := textFixture(t, textID1)
	saved, err := tb.Save(c, in)
	if err != nil || saved.Version != 1 {
		t.Fatalf("Save = %+v, %v", saved, err)
	}
	raw := rawByID(t, db, tb.Name(), &types.AttributeValueMemberS{Value: textID1})
	for name, want := range map[string]string{"id": textID1, "addr": "2001:db8::7", "ref": textID2} {
		if got := sValue(t, name, raw[name]); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if ss, ok := raw["refs"].(*types.AttributeValueMemberSS); !ok {
		t.Errorf("refs stored as %T, want SS", raw["refs"])
	} else if got := slices.Sorted(slices.Values(ss.Value)); !slices.Equal(got, []string{textID2, textID3}) {
		t.Errorf("refs = %v", got)
	}
	if m, ok := raw["byname"].(*types.AttributeValueMemberM); !ok || sValue(t, "byname.a", m.Value["a"]) != textID3 {
		t.Errorf("byname = %#v, want a map of S", raw["byname"])
	}

	// Load returns equal values.
	got, err := tb.Load(c, textDoc{ID: in.ID}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	sameTextDoc(t, "Load", got, saved)

	// A stale copy conflicts; Current decodes the stored item.
	next := saved
	next.Note = "second"
	next.Addr = netip.MustParseAddr("10.1.2.3")
	second, err := tb.Save(c, next)
	if err != nil || second.Version != 2 {
		t.Fatalf("second Save = %+v, %v", second, err)
	}
	_, err = tb.Save(c, saved)
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("Save of a stale copy = %v, want a version conflict", err)
	}
	cur, err := tb.Current(err)
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	sameTextDoc(t, "Current", cur, second)

	// BatchLoad by UUID keys.
	other := textFixture(t, textID2)
	other.Ref = nil
	if other, err = tb.Save(c, other); err != nil {
		t.Fatal(err)
	}
	items, err := tb.BatchLoad(c, []textDoc{{ID: in.ID}, {ID: other.ID}, {ID: codectest.MustUUID(textID3)}}, dynamo.ConsistentRead())
	if err != nil || len(items) != 2 {
		t.Fatalf("BatchLoad = %d items, %v; want 2", len(items), err)
	}
	slices.SortFunc(items, func(a, b textDoc) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	sameTextDoc(t, "BatchLoad[0]", items[0], other) // textID2 < textID1
	sameTextDoc(t, "BatchLoad[1]", items[1], second)

	// Query with the key as the S DynamoDB stores.
	key := expression.Key("id").Equal(expression.Value(&types.AttributeValueMemberS{Value: textID1}))
	var found []textDoc
	for d, err := range tb.Query(c, key, dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, d)
	}
	if len(found) != 1 {
		t.Fatalf("Query found %d items, want 1", len(found))
	}
	sameTextDoc(t, "Query", found[0], second)

	// Transact: read and save by UUID key; WriteTx: a versioned TxSave.
	err = tb.Mapper().Transact(c, func(tx *dynamo.Tx) error {
		d, err := tb.In(tx).Load(textDoc{ID: in.ID})
		if err != nil {
			return err
		}
		d.Note = "tx"
		d.Refs = append(d.Refs, d.ID)
		_, err = tb.In(tx).Save(d)
		return err
	})
	if err != nil {
		t.Fatalf("Transact: %v", err)
	}
	afterTx, err := tb.Load(c, textDoc{ID: in.ID}, dynamo.ConsistentRead())
	if err != nil || afterTx.Version != 3 || afterTx.Note != "tx" || len(afterTx.Refs) != 3 {
		t.Fatalf("after Transact: %+v, %v", afterTx, err)
	}
	third := textFixture(t, textID3)
	third.Note = "writetx"
	upd := other
	upd.Note = "writetx"
	s1, s2 := tb.TxSave(third), tb.TxSave(upd)
	if err := tb.Mapper().WriteTx(c, []dynamo.TxOp{s1, s2}); err != nil {
		t.Fatalf("WriteTx: %v", err)
	}
	for _, want := range []textDoc{s1.Saved(), s2.Saved()} {
		got, err := tb.Load(c, textDoc{ID: want.ID}, dynamo.ConsistentRead())
		if err != nil {
			t.Fatal(err)
		}
		sameTextDoc(t, "Load after WriteTx", got, want)
	}
	if err := tb.Mapper().WriteTx(c, []dynamo.TxOp{tb.TxSave(upd)}); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("WriteTx of a stale copy = %v, want a version conflict", err)
	}

	// Written raw as Java writes UUIDs: S, SS.
	javaID := "0f0e0d0c-0b0a-0908-0706-050403020100"
	put := func(item map[string]types.AttributeValue) {
		t.Helper()
		if _, err := db.PutItem(c, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	put(map[string]types.AttributeValue{
		"id":     &types.AttributeValueMemberS{Value: javaID},
		"v":      &types.AttributeValueMemberN{Value: "4"},
		"addr":   &types.AttributeValueMemberS{Value: "192.0.2.1"},
		"ref":    &types.AttributeValueMemberS{Value: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"}, // UUID.fromString reads either case
		"refs":   &types.AttributeValueMemberSS{Value: []string{textID2}},
		"byname": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": &types.AttributeValueMemberS{Value: textID3}}},
	})
	ref1 := codectest.MustUUID(textID1)
	want := textDoc{ID: codectest.MustUUID(javaID), Version: 4, Addr: netip.MustParseAddr("192.0.2.1"), Ref: &ref1,
		Refs: []codectest.UUID{codectest.MustUUID(textID2)}, ByName: map[string]codectest.UUID{"a": codectest.MustUUID(textID3)}}
	got, err = tb.Load(c, textDoc{ID: want.ID}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatalf("Load of the item written as Java writes: %v", err)
	}
	sameTextDoc(t, "Load of the item written as Java writes", got, want)
	if _, err := tb.Save(c, got); err != nil {
		t.Fatalf("Save of the loaded item: %v", err)
	}
	if s := sValue(t, "ref", rawByID(t, db, tb.Name(), &types.AttributeValueMemberS{Value: javaID})["ref"]); s != textID1 {
		t.Errorf("ref saved back as %q, want %q", s, textID1)
	}

	// Written before this change: the UUIDs as B (the key aside: this table's key is S).
	oldID := "a0a1a2a3-b0b1-c0c1-d0d1-e0e1e2e3e4e5"
	id2, id3 := codectest.MustUUID(textID2), codectest.MustUUID(textID3)
	put(map[string]types.AttributeValue{
		"id":     &types.AttributeValueMemberS{Value: oldID},
		"v":      &types.AttributeValueMemberN{Value: "9"},
		"ref":    &types.AttributeValueMemberB{Value: ref1[:]},
		"refs":   &types.AttributeValueMemberBS{Value: [][]byte{id2[:], id3[:]}},
		"byname": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": &types.AttributeValueMemberB{Value: id3[:]}}},
	})
	want = textDoc{ID: codectest.MustUUID(oldID), Version: 9, Ref: &ref1, Refs: []codectest.UUID{id2, id3}, ByName: map[string]codectest.UUID{"a": id3}}
	got, err = tb.Load(c, textDoc{ID: want.ID}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatalf("Load of an item holding the old B encoding: %v", err)
	}
	sameTextDoc(t, "Load of an item holding the old B encoding", got, want)
	if _, err := tb.Save(c, got); err != nil {
		t.Fatalf("Save of the loaded old item: %v", err)
	}
	raw = rawByID(t, db, tb.Name(), &types.AttributeValueMemberS{Value: oldID})
	if sValue(t, "ref", raw["ref"]) != textID1 {
		t.Errorf("ref rewritten as %v, want S %s", raw["ref"], textID1)
	}
	if _, ok := raw["refs"].(*types.AttributeValueMemberSS); !ok {
		t.Errorf("refs rewritten as %T, want SS", raw["refs"])
	}

	// A wrong S is an error naming the type and the value, not a zero UUID
	// (decode errors do not name the attribute).
	put(map[string]types.AttributeValue{
		"id":  &types.AttributeValueMemberS{Value: textID3},
		"ref": &types.AttributeValueMemberS{Value: "not-a-uuid"},
	})
	_, err = tb.Load(c, textDoc{ID: codectest.MustUUID(textID3)}, dynamo.ConsistentRead())
	mustContain(t, err, "codectest.UUID.UnmarshalText", "not-a-uuid")
}

// TestTextUUIDKeyOnOldBinaryTable: a table made for the old encoding (hash
// key type B, an item written with the UUID's 16 bytes) does not take the S
// key the mapper now sends: DynamoDB refuses the request with a key type
// mismatch rather than the mapper finding nothing, so a key of a text type
// needs a table whose key type is S (docs/porting-from-java.md, "Text types: UUIDs, addresses").
func TestTextUUIDKeyOnOldBinaryTable(t *testing.T) {
	db := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, db, "oldb", "id", types.ScalarAttributeTypeB, "", "")
	id := codectest.MustUUID(textID1)
	if _, err := db.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberB{Value: id[:]}, "v": &types.AttributeValueMemberN{Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	tb, err := dynamo.NewTable[textDoc](dynamo.NewMapper(db), name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Load(ctx(t), textDoc{ID: id}, dynamo.ConsistentRead())
	if err == nil || errors.Is(err, dynamo.ErrNotFound) {
		t.Fatalf("Load by an S key from a B-keyed table = %v, want DynamoDB's key type mismatch", err)
	}
	mustContain(t, err, "mismatch")
	t.Logf("Load on a B-keyed table: %v", err)
}
