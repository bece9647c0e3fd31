package integration

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// The Go side of the Java interop test. The types and fixtures here mirror
// V1Item/V1Doc (DynamoDBMapper) and V2Item/V2Doc (v2 Enhanced Client) in
// java/Interop.java field for field; change both together.

type javaV1Doc struct {
	Name  string            `dynamo:"name"`
	Flag  bool              `dynamo:"flag,javabool"`
	When  time.Time         `dynamo:"when,javadate"`
	Flags []bool            `dynamo:"flags,javabool"`
	Tags  []string          `dynamo:"tags,stringset"` // `set` applies to top-level fields only
	Attrs map[string]string `dynamo:"attrs"`
}

type javaV1Item struct {
	ID      string                `dynamo:"id,hash"`
	Seq     int64                 `dynamo:"seq,range"`
	Version int64                 `dynamo:"version,version"`
	Str     string                `dynamo:"str"`
	I       int32                 `dynamo:"i"`
	L       int64                 `dynamo:"l"`
	Sh      int16                 `dynamo:"sh"`
	By      int8                  `dynamo:"by"`
	F       float32               `dynamo:"f"`
	D       float64               `dynamo:"d"`
	BD      attributevalue.Number `dynamo:"bd"` // BigDecimal: the digits, exactly
	BI      attributevalue.Number `dynamo:"bi"` // BigInteger
	B       *bool                 `dynamo:"b,javabool"`
	PB      bool                  `dynamo:"pb,javabool"`
	Date    time.Time             `dynamo:"date,javadate"`
	Cal     time.Time             `dynamo:"cal,javadate"`
	SS      []string              `dynamo:"ss,set"`
	NS      []int                 `dynamo:"ns,set"`
	BS      [][]byte              `dynamo:"bs,set"`
	Bin     []byte                `dynamo:"bin"`
	List    []string              `dynamo:"list"`
	LB      []bool                `dynamo:"lb,javabool"`
	Map     map[string]int        `dynamo:"map"`
	Doc     *javaV1Doc            `dynamo:"doc"`
	Docs    []javaV1Doc           `dynamo:"docs"`
	Color   string                `dynamo:"color"` // @DynamoDBTypeConvertedEnum
	Renamed string                `dynamo:"renamed"`
	Note    string                `dynamo:"note"`
	Absent  *string               `dynamo:"absent"`
	NoDate  time.Time             `dynamo:"nodate,javadate,omitempty"` // a null Date: left out while zero
	Longs   map[string]any        `dynamo:"longs"`                     // Map<String, Long>: exact digits
	UID     codectest.UUID        `dynamo:"uid"`                       // java.util.UUID: S, UUID.toString()
	UIDs    []codectest.UUID      `dynamo:"uids,set"`                  // Set<UUID>: SS
}

// The UUIDs of the fixtures (UID and UIDS in java/Interop.java).
const javaUID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

var javaUIDs = [2]string{"00000000-0000-0000-0000-000000000000", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"}

func javaUUIDs() (codectest.UUID, []codectest.UUID) {
	return codectest.MustUUID(javaUID), []codectest.UUID{codectest.MustUUID(javaUIDs[0]), codectest.MustUUID(javaUIDs[1])}
}

func javaV1Fixture(id string) javaV1Item {
	tr := true
	uid, uids := javaUUIDs()
	inner := javaV1Doc{Name: "inner", Flag: true, When: time.UnixMilli(1600000000000).UTC(), Flags: []bool{false, true},
		Tags: []string{"t1", "t2"}, Attrs: map[string]string{"k": "v"}}
	return javaV1Item{
		ID: id, Seq: 7,
		Str: "héllo, wörld ✓ \"quoted\"",
		I:   2147483647, L: 9007199254740993, Sh: -32768, By: -128, F: 1.5, D: -273.15,
		BD: "-3.14159265358979323846264338327950288", BI: "123456789012345678901234567890",
		B: &tr, PB: false,
		Date: time.UnixMilli(1700000000120).UTC(),
		Cal:  time.UnixMilli(1700000000456).UTC(),
		SS:   []string{"a", "b"}, NS: []int{1, 2, 3}, BS: [][]byte{{1}, {2, 3}},
		Bin:  []byte{0, 1, 2, 255},
		List: []string{"x", "y"}, LB: []bool{true, false, true},
		Map: map[string]int{"one": 1, "two": 2},
		Doc: &inner,
		Docs: []javaV1Doc{inner, {Name: "second", Flag: false, When: time.UnixMilli(1500000000999).UTC(), Flags: []bool{true},
			Tags: []string{"t3"}, Attrs: map[string]string{"k2": "v2"}}},
		Color: "RED", Renamed: "renamed in Java", Note: "fixture",
		Longs: map[string]any{"max": attributevalue.Number("9223372036854775807"), "min": attributevalue.Number("-9223372036854775808")},
		UID:   uid, UIDs: uids,
	}
}

type javaV2Doc struct {
	Name string    `dynamo:"name"`
	Flag bool      `dynamo:"flag"` // the v2 client stores Boolean as BOOL, as Go does
	At   time.Time `dynamo:"at"`   // Instant: ISO-8601 with up to 9 digits, as Go does
	Tags []string  `dynamo:"tags"`
}

type javaV2Item struct {
	ID       string                `dynamo:"id,hash"`
	Seq      int64                 `dynamo:"seq,range"`
	Version  int64                 `dynamo:"version,version"`
	Str      string                `dynamo:"str"`
	I        int32                 `dynamo:"i"`
	L        int64                 `dynamo:"l"`
	D        float64               `dynamo:"d"`
	F        float32               `dynamo:"f"`
	BD       attributevalue.Number `dynamo:"bd"`
	B        bool                  `dynamo:"b"`
	At       time.Time             `dynamo:"at"`
	AtMillis time.Time             `dynamo:"atMillis,javadate"`
	SS       []string              `dynamo:"ss,set"`
	NS       []int64               `dynamo:"ns,set"`
	BS       [][]byte              `dynamo:"bs,set"`
	Bin      []byte                `dynamo:"bin"`
	List     []string              `dynamo:"list"`
	LB       []bool                `dynamo:"lb"`
	Map      map[string]int64      `dynamo:"map"`
	Doc      *javaV2Doc            `dynamo:"doc"`
	Docs     []javaV2Doc           `dynamo:"docs"`
	Note     string                `dynamo:"note"`
	Absent   *string               `dynamo:"absent"`
	UID      codectest.UUID        `dynamo:"uid"`
	UIDs     []codectest.UUID      `dynamo:"uids,set"`
}

func javaV2Fixture(id string) javaV2Item {
	uid, uids := javaUUIDs()
	inner := javaV2Doc{Name: "inner", Flag: true, At: time.UnixMilli(1600000000000).UTC(), Tags: []string{"t1"}}
	return javaV2Item{
		ID: id, Seq: 7,
		Str: "héllo, wörld ✓ \"quoted\"",
		I:   -2147483648, L: -9007199254740993, D: 6.02214076e23, F: -0.25,
		BD:       "12345678901234567890.000000000000000001",
		B:        true,
		At:       time.Unix(1700000000, 123456789).UTC(),
		AtMillis: time.UnixMilli(1700000000123).UTC(),
		SS:       []string{"a", "b"}, NS: []int64{10, 20}, BS: [][]byte{{9}, []byte("z")},
		Bin:  []byte{0, 128, 255},
		List: []string{"x", "y"}, LB: []bool{false, true},
		Map:  map[string]int64{"one": 1},
		Doc:  &inner,
		Docs: []javaV2Doc{inner, {Name: "second", Flag: false, At: time.Unix(1500000000, 0).UTC(), Tags: []string{"t2", "t3"}}},
		Note: "fixture",
		UID:  uid, UIDs: uids,
	}
}

// TestJavaInterop runs DynamoDBMapper (Java SDK v1) and the Java v2 Enhanced
// Client against the same tables as the Go mapper: each side loads what the
// other wrote and finds every field as written, stores exactly the attributes
// the other stores, and optimistic locking holds across them in both
// directions.
func TestJavaInterop(t *testing.T) {
	start := time.Now()
	endpoint := dynamotest.Endpoint(t)
	lib := javaLibDir(t)
	classes := compileJava(t, lib)
	compiled := time.Now()

	// The same dummy credentials and region on both sides (dynamotest starts
	// DynamoDB Local with -sharedDb, so any key would do; a server reached
	// through DYNAMODB_ENDPOINT may keep tables per access key and region).
	const key, region = "javainterop", "us-east-1"
	client := dynamotest.NewClient(endpoint, func(o *dynamodb.Options) {
		o.Region = region
		o.Credentials = credentials.NewStaticCredentialsProvider(key, key, "")
	})
	m := dynamo.NewMapper(client)
	v1 := javaTable[javaV1Item](t, m, client, "javav1")
	v2 := javaTable[javaV2Item](t, m, client, "javav2")
	u := javaTable[javaUUIDItem](t, m, client, "javauuid")

	java := startJava(t, lib, classes, endpoint, region, key, key, v1.Name(), v2.Name(), u.Name())
	started := time.Now()

	t.Run("DynamoDBMapper", func(t *testing.T) {
		javaDataBothWays(t, java, "v1", client, v1, javaV1Fixture, normalizeV1)
		javaVersionsV1(t, java, v1)
	})
	t.Run("EnhancedClient", func(t *testing.T) {
		javaDataBothWays(t, java, "v2", client, v2, javaV2Fixture, normalizeV2)
		javaVersionsV2(t, java, v2)
	})
	t.Run("ClockVersions", func(t *testing.T) {
		javaClockVersions(t, java, client, v1.Name(), v2.Name())
	})
	t.Run("UUIDKeys", func(t *testing.T) {
		javaUUIDKeys(t, java, client, u, "u1", "11111111-2222-4333-8444-555555555555")
		javaUUIDKeys(t, java, client, u, "u2", "AAAAAAAA-bbbb-4ccc-8ddd-eeeeeeeeeeee")
	})
	java.quit(t)
	t.Logf("javac %v, JVM start %v, steps %v, total %v",
		compiled.Sub(start).Round(time.Millisecond), started.Sub(compiled).Round(time.Millisecond),
		time.Since(started).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// javaDataBothWays checks data in both directions for one Java client (cl is
// "v1" or "v2"): Java writes the fixture, Go loads it field by field and
// saves it back, Java loads that unchanged; Go writes the fixture, Java loads
// it field by field and saves it back, Go loads that unchanged; and the items
// Java and Go wrote hold the same attributes with the same types.
func javaDataBothWays[T any](t *testing.T, java *javaProc, cl string, client *dynamodb.Client, tb *dynamo.Table[T],
	fixture func(id string) T, normalize func(*T)) {
	load := func(id string) T {
		t.Helper()
		item, err := tb.Load(ctx(t), fixture(id), dynamo.ConsistentRead())
		if err != nil {
			t.Fatalf("Go Load of %s: %v", id, err)
		}
		normalize(&item)
		return item
	}
	setVersion := func(item *T, v int64) { reflect.ValueOf(item).Elem().FieldByName("Version").SetInt(v) }

	// Java writes, Go reads.
	java.expect(t, "ok 1", "%s.write java-%s", cl, cl)
	got := load("java-" + cl)
	want := fixture("java-" + cl)
	setVersion(&want, 1)
	diffFields(t, "Go Load of the item Java wrote", got, want)
	javaItem := rawItem(t, client, tb.Name(), "java-"+cl)

	// Go saves what it loaded; Java finds it unchanged.
	if _, err := tb.Save(ctx(t), got); err != nil {
		t.Fatalf("Go Save of the item Java wrote: %v", err)
	}
	java.expect(t, "ok 2", "%s.check java-%s", cl, cl)

	// Go writes, Java reads.
	if _, err := tb.Save(ctx(t), fixture("go-"+cl)); err != nil {
		t.Fatalf("Go Save of the fixture: %v", err)
	}
	goItem := rawItem(t, client, tb.Name(), "go-"+cl)
	java.expect(t, "ok 1", "%s.check go-%s", cl, cl)
	sameAttributes(t, goItem, javaItem)

	// Java saves what it loaded; Go finds it unchanged.
	java.expect(t, "ok 2", "%s.resave go-%s", cl, cl)
	want = fixture("go-" + cl)
	setVersion(&want, 2)
	diffFields(t, "Go Load of the item Java saved back", load("go-"+cl), want)
}

// javaVersionsV1 alternates versioned saves and deletes of one item between
// DynamoDBMapper and Go: every stale write is a conflict on both sides, and
// versions keep counting from where the other side left them.
func javaVersionsV1(t *testing.T, java *javaProc, tb *dynamo.Table[javaV1Item]) {
	const id = "alt-v1"
	g := goWriter[javaV1Item]{tb: tb, fixture: javaV1Fixture, id: id}
	g.save(t, 0, "g1", 1)
	java.expect(t, "ok 1 g1", "v1.load %s", id)
	java.expect(t, "ok 2", "v1.save %s 1 j2", id)
	g.conflict(t, 1, 2)
	g.save(t, 2, "g3", 3)
	java.expect(t, "conflict", "v1.save %s 2 stale", id)
	java.expect(t, "ok 4", "v1.save %s 3 j4", id)
	g.update(t, "g5", 5) // Table.Update reads 4 and writes 5
	java.expect(t, "conflict", "v1.save %s 4 stale", id)
	java.expect(t, "conflict", "v1.save %s 0 unsaved", id)
	g.conflict(t, 0, 5)
	java.expect(t, "conflict", "v1.delete %s 4", id)
	g.deleteConflict(t, 4, 5)
	java.expect(t, "ok 5 g5", "v1.load %s", id)
	java.expect(t, "ok", "v1.delete %s 5", id)
	g.conflict(t, 5, -1) // gone
	java.expect(t, "conflict", "v1.save %s 5 gone", id)
	java.expect(t, "ok 1", "v1.save %s 0 j1", id)
	g.clobber(t, "gc", 2) // no version check, but the version still grows
	java.expect(t, "conflict", "v1.save %s 1 stale", id)
	java.expect(t, "ok 3", "v1.save %s 2 j3", id)
	g.delete(t, 3)
	java.expect(t, "missing", "v1.load %s", id)
}

// javaVersionsV2 does the same with the v2 Enhanced Client, whose deleteItem
// does not check versions (so only Go deletes here).
func javaVersionsV2(t *testing.T, java *javaProc, tb *dynamo.Table[javaV2Item]) {
	const id = "alt-v2"
	g := goWriter[javaV2Item]{tb: tb, fixture: javaV2Fixture, id: id}
	java.expect(t, "ok 1", "v2.save %s 0 j1", id)
	g.load(t, 1, "j1")
	g.save(t, 1, "g2", 2)
	java.expect(t, "conflict", "v2.save %s 1 stale", id)
	java.expect(t, "ok 3", "v2.save %s 2 j3", id)
	g.conflict(t, 2, 3)
	g.update(t, "g4", 4)
	java.expect(t, "conflict", "v2.save %s 3 stale", id)
	java.expect(t, "conflict", "v2.save %s 0 unsaved", id)
	g.conflict(t, 0, 4)
	java.expect(t, "ok 4 g4", "v2.load %s", id)
	g.deleteConflict(t, 3, 4)
	g.clobber(t, "gc", 5)
	java.expect(t, "conflict", "v2.save %s 4 stale", id)
	java.expect(t, "ok 6", "v2.save %s 5 j6", id)
	g.delete(t, 6)
	java.expect(t, "missing", "v2.load %s", id)
	java.expect(t, "conflict", "v2.save %s 6 gone", id)
}

// javaClockItem is the key, version and note of the interop items, its
// versions started from the clock (issue 15 item 1).
type javaClockItem struct {
	ID      string `dynamo:"id,hash"`
	Seq     int64  `dynamo:"seq,range"`
	Version int64  `dynamo:"version,version,versionstart=clock"`
	Note    string `dynamo:"note"`
}

// javaClockVersions checks versionstart=clock against the Java clients
// DynamoDB Local ships, whose version settings are fixed (start 1, step 1;
// the shipped Enhanced Client predates startAt/incrementBy/initialValue):
// DynamoDBMapper saves an item Go created at a clock version (its Long
// version takes it, +1), stale holders conflict on both sides, and after a
// delete the copy Java held conflicts with the item Go created again. The
// shipped Enhanced Client parses versions as a Java int and cannot save an
// item whose version passed 2147483647: it fails before sending.
func javaClockVersions(t *testing.T, java *javaProc, client *dynamodb.Client, v1Table, v2Table string) {
	fc := clock.NewFake(time.UnixMilli(1_700_000_000_000))
	m := dynamo.NewMapper(client, dynamo.WithClock(fc))
	t0 := fc.Now().UnixMilli()
	item := func(id string, v int64, n string) javaClockItem {
		return javaClockItem{ID: id, Seq: 7, Version: v, Note: n}
	}
	tb, err := dynamo.NewTable[javaClockItem](m, v1Table)
	if err != nil {
		t.Fatal(err)
	}
	const id = "clock-v1"
	first, err := tb.Save(ctx(t), item(id, 0, "g1"))
	if err != nil || first.Version != t0 {
		t.Fatalf("Go Save = %d, %v; want version %d", first.Version, err, t0)
	}
	java.expect(t, fmt.Sprintf("ok %d g1", t0), "v1.load %s", id)
	java.expect(t, fmt.Sprintf("ok %d", t0+1), "v1.save %s %d j2", id, t0)
	if _, err := tb.Save(ctx(t), first); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("Go Save of a stale copy = %v, want a conflict", err)
	}
	java.expect(t, "conflict", "v1.save %s %d stale", id, t0)
	cur, err := tb.Load(ctx(t), item(id, 0, ""), dynamo.ConsistentRead())
	if err != nil || cur.Version != t0+1 || cur.Note != "j2" {
		t.Fatalf("Go Load = %+v, %v; want version %d note j2", cur, err, t0+1)
	}
	if err := tb.Delete(ctx(t), cur); err != nil {
		t.Fatal(err)
	}
	fc.Advance(10 * time.Millisecond)
	again, err := tb.Save(ctx(t), item(id, 0, "g-new"))
	if err != nil || again.Version != t0+10 {
		t.Fatalf("Go re-create = %d, %v; want version %d", again.Version, err, t0+10)
	}
	// Java's copy from before the delete (version t0+1) conflicts.
	java.expect(t, "conflict", "v1.save %s %d stale", id, t0+1)
	java.expect(t, "conflict", "v1.delete %s %d", id, t0+1)
	java.expect(t, fmt.Sprintf("ok %d g-new", t0+10), "v1.load %s", id)

	tb2, err := dynamo.NewTable[javaClockItem](m, v2Table)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb2.Save(ctx(t), item("clock-v2", 0, "g1")); err != nil {
		t.Fatal(err)
	}
	java.expect(t, fmt.Sprintf("ok %d g1", t0+10), "v2.load clock-v2")
	java.expectPrefix(t, "error java.lang.NumberFormatException", "v2.save clock-v2 %d j2", t0+10)
}

// javaUUIDItem is U1Item/U2Item of java/Interop.java: a UUID hash key (S).
type javaUUIDItem struct {
	ID      codectest.UUID `dynamo:"id,hash"`
	Version int64          `dynamo:"version,version"`
	Ref     codectest.UUID `dynamo:"ref"`
	Note    string         `dynamo:"note"`
}

// javaUUIDKeys checks items keyed by a UUID between one Java client (cl is
// "u1" for DynamoDBMapper, "u2" for the Enhanced Client, both converting
// java.util.UUID natively to S) and Go's [16]byte text type: Java writes
// and Go reads; Go saves and Java reads; stale copies conflict on both
// sides; Go creates and Java saves over it. idText may be in any case, as
// UUID.fromString takes it; both sides store the lower-case form.
func javaUUIDKeys(t *testing.T, java *javaProc, client *dynamodb.Client, tb *dynamo.Table[javaUUIDItem], cl, idText string) {
	c := ctx(t)
	id := codectest.MustUUID(idText)
	ref1, ref2, ref3 := codectest.MustUUID(javaUID), codectest.MustUUID(javaUIDs[0]), codectest.MustUUID(javaUIDs[1])
	checkRaw := func(id codectest.UUID, ref codectest.UUID) {
		t.Helper()
		raw := rawByID(t, client, tb.Name(), &types.AttributeValueMemberS{Value: id.String()})
		if got := sValue(t, "id", raw["id"]); got != id.String() {
			t.Errorf("id stored as %q, want %q", got, id)
		}
		if got := sValue(t, "ref", raw["ref"]); got != ref.String() {
			t.Errorf("ref stored as %q, want %q", got, ref)
		}
	}
	load := func(id codectest.UUID) javaUUIDItem {
		t.Helper()
		got, err := tb.Load(c, javaUUIDItem{ID: id}, dynamo.ConsistentRead())
		if err != nil {
			t.Fatalf("Go Load of %s: %v", id, err)
		}
		return got
	}

	// Java writes, Go reads.
	java.expect(t, "ok 1", "%s.save %s 0 %s", cl, idText, ref1)
	checkRaw(id, ref1)
	if got, want := load(id), (javaUUIDItem{ID: id, Version: 1, Ref: ref1, Note: "java"}); got != want {
		t.Fatalf("Go Load of the item Java wrote = %+v, want %+v", got, want)
	}

	// Go saves, Java reads; stale copies conflict on both sides.
	saved, err := tb.Save(c, javaUUIDItem{ID: id, Version: 1, Ref: ref2, Note: "go"})
	if err != nil || saved.Version != 2 {
		t.Fatalf("Go Save over the item Java wrote = %+v, %v", saved, err)
	}
	checkRaw(id, ref2)
	java.expect(t, "ok 2 "+ref2.String(), "%s.load %s", cl, idText)
	java.expect(t, "conflict", "%s.save %s 1 %s", cl, idText, ref3)
	java.expect(t, "ok 3", "%s.save %s 2 %s", cl, idText, ref3)
	_, err = tb.Save(c, saved)
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("Go Save of a stale copy = %v, want a version conflict", err)
	}
	if cur, err := tb.Current(err); err != nil || cur != (javaUUIDItem{ID: id, Version: 3, Ref: ref3, Note: "java"}) {
		t.Fatalf("Current of the conflict = %+v, %v", cur, err)
	}

	// Go creates, Java reads and saves, Go reads.
	id2 := id
	id2[15] ^= 0xff
	if _, err := tb.Save(c, javaUUIDItem{ID: id2, Ref: ref3, Note: "go"}); err != nil {
		t.Fatal(err)
	}
	checkRaw(id2, ref3)
	java.expect(t, "ok 1 "+ref3.String(), "%s.load %s", cl, id2)
	java.expect(t, "ok 2", "%s.save %s 1 %s", cl, id2, ref1)
	if got, want := load(id2), (javaUUIDItem{ID: id2, Version: 2, Ref: ref1, Note: "java"}); got != want {
		t.Fatalf("Go Load of the item Java saved over = %+v, want %+v", got, want)
	}
}

// goWriter makes the Go side's moves on item id of the alternation tests.
type goWriter[T any] struct {
	tb      *dynamo.Table[T]
	fixture func(id string) T
	id      string
}

// item is the fixture holding version and note.
func (g goWriter[T]) item(version int64, note string) T {
	it := g.fixture(g.id)
	v := reflect.ValueOf(&it).Elem()
	v.FieldByName("Version").SetInt(version)
	v.FieldByName("Note").SetString(note)
	return it
}

func version[T any](it T) int64 { return reflect.ValueOf(it).FieldByName("Version").Int() }
func note[T any](it T) string   { return reflect.ValueOf(it).FieldByName("Note").String() }

func (g goWriter[T]) save(t *testing.T, held int64, n string, want int64) {
	t.Helper()
	saved, err := g.tb.Save(ctx(t), g.item(held, n))
	if err != nil {
		t.Fatalf("Go Save holding version %d: %v", held, err)
	}
	if version(saved) != want {
		t.Fatalf("Go Save holding version %d wrote version %d, want %d", held, version(saved), want)
	}
}

// conflict saves holding held and expects a conflict that found version
// found (-1: the item does not exist).
func (g goWriter[T]) conflict(t *testing.T, held, found int64) {
	t.Helper()
	_, err := g.tb.Save(ctx(t), g.item(held, "stale"))
	g.checkConflict(t, "Save", err, held, found)
}

func (g goWriter[T]) checkConflict(t *testing.T, op string, err error, held, found int64) {
	t.Helper()
	var ce *dynamo.ConditionError
	if !errors.Is(err, dynamo.ErrVersionConflict) || !errors.As(err, &ce) {
		t.Fatalf("Go %s holding version %d: err = %v, want a version conflict", op, held, err)
	}
	switch {
	case found < 0 && ce.Exists:
		t.Fatalf("Go %s holding version %d: conflict %v, want the item gone", op, held, err)
	case found >= 0 && (!ce.Exists || ce.FoundVersion != found):
		t.Fatalf("Go %s holding version %d: conflict %v, want found version %d", op, held, err, found)
	case found >= 0:
		if cur, err := g.tb.Current(err); err != nil || version(cur) != found {
			t.Fatalf("Current of the conflict = version %d, %v; want %d", version(cur), err, found)
		}
	}
}

func (g goWriter[T]) load(t *testing.T, wantVersion int64, wantNote string) {
	t.Helper()
	it, err := g.tb.Load(ctx(t), g.item(0, ""), dynamo.ConsistentRead())
	if err != nil || version(it) != wantVersion || note(it) != wantNote {
		t.Fatalf("Go Load = version %d note %q, %v; want version %d note %q", version(it), note(it), err, wantVersion, wantNote)
	}
}

func (g goWriter[T]) update(t *testing.T, n string, want int64) {
	t.Helper()
	saved, err := g.tb.Update(ctx(t), g.item(0, ""), func(cur T) (T, error) {
		reflect.ValueOf(&cur).Elem().FieldByName("Note").SetString(n)
		return cur, nil
	})
	if err != nil || version(saved) != want {
		t.Fatalf("Go Update = version %d, %v; want version %d", version(saved), err, want)
	}
}

func (g goWriter[T]) clobber(t *testing.T, n string, want int64) {
	t.Helper()
	saved, err := g.tb.Save(ctx(t), g.item(0, n), dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err != nil || version(saved) != want {
		t.Fatalf("Go SaveClobber = version %d, %v; want version %d", version(saved), err, want)
	}
}

func (g goWriter[T]) delete(t *testing.T, held int64) {
	t.Helper()
	if err := g.tb.Delete(ctx(t), g.item(held, "")); err != nil {
		t.Fatalf("Go Delete holding version %d: %v", held, err)
	}
}

func (g goWriter[T]) deleteConflict(t *testing.T, held, found int64) {
	t.Helper()
	err := g.tb.Delete(ctx(t), g.item(held, ""))
	g.checkConflict(t, "Delete", err, held, found)
}

// javaTable creates the table T's tags describe (deleted when the test ends)
// and returns it.
func javaTable[T any](t *testing.T, m *dynamo.Mapper, client *dynamodb.Client, prefix string) *dynamo.Table[T] {
	t.Helper()
	proto, err := dynamo.NewTable[T](m, prefix)
	if err != nil {
		t.Fatal(err)
	}
	in, err := proto.CreateTableInput()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := dynamo.NewTable[T](m, dynamotest.CreateTable(t, client, in))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func rawItem(t *testing.T, client *dynamodb.Client, table, id string) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(ctx(t), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"id":  &types.AttributeValueMemberS{Value: id},
			"seq": &types.AttributeValueMemberN{Value: "7"},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("GetItem %s: %v (item %v)", id, err, out)
	}
	return out.Item
}

// sameAttributes checks that the item Go wrote holds the attributes of the
// item Java wrote, of the same types and values: numbers compared as numbers,
// sets as sets, NULL as absent. The key, the version and the Go mapper's
// write token are left out.
func sameAttributes(t *testing.T, goItem, javaItem map[string]types.AttributeValue) {
	t.Helper()
	skip := func(k string) bool {
		return k == "id" || k == "version" || k == dynamo.DefaultWriteTokenAttribute
	}
	names := map[string]bool{}
	for k := range goItem {
		names[k] = true
	}
	for k := range javaItem {
		names[k] = true
	}
	for k := range names {
		if skip(k) {
			continue
		}
		g, j := goItem[k], javaItem[k]
		if isNull(g) && isNull(j) {
			continue
		}
		if d := avDiff(g, j); d != "" {
			t.Errorf("attribute %q: Go wrote %s, Java wrote %s (%s)", k, showAV(g), showAV(j), d)
		}
	}
}

func isNull(av types.AttributeValue) bool {
	_, null := av.(*types.AttributeValueMemberNULL)
	return av == nil || null
}

// avDiff describes how two attribute values differ, "" when they do not.
func avDiff(a, b types.AttributeValue) string {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return fmt.Sprintf("type %T, not %T", a, b)
	}
	sortedStrings := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	switch a := a.(type) {
	case *types.AttributeValueMemberN:
		if !sameNumber(a.Value, b.(*types.AttributeValueMemberN).Value) {
			return "number"
		}
	case *types.AttributeValueMemberNS:
		x, y := sortedNumbers(a.Value), sortedNumbers(b.(*types.AttributeValueMemberNS).Value)
		if !slices.EqualFunc(x, y, func(p, q *big.Rat) bool { return p.Cmp(q) == 0 }) {
			return "number set"
		}
	case *types.AttributeValueMemberSS:
		if !slices.Equal(sortedStrings(a.Value), sortedStrings(b.(*types.AttributeValueMemberSS).Value)) {
			return "string set"
		}
	case *types.AttributeValueMemberBS:
		x, y := slices.Clone(a.Value), slices.Clone(b.(*types.AttributeValueMemberBS).Value)
		slices.SortFunc(x, bytes.Compare)
		slices.SortFunc(y, bytes.Compare)
		if !slices.EqualFunc(x, y, bytes.Equal) {
			return "binary set"
		}
	case *types.AttributeValueMemberL:
		bl := b.(*types.AttributeValueMemberL).Value
		if len(a.Value) != len(bl) {
			return "list length"
		}
		for i := range a.Value {
			if d := avDiff(a.Value[i], bl[i]); d != "" {
				return fmt.Sprintf("[%d]: %s", i, d)
			}
		}
	case *types.AttributeValueMemberM:
		bm := b.(*types.AttributeValueMemberM).Value
		keys := map[string]bool{}
		for k := range a.Value {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			if isNull(a.Value[k]) && isNull(bm[k]) {
				continue
			}
			if d := avDiff(a.Value[k], bm[k]); d != "" {
				return fmt.Sprintf(".%s: %s", k, d)
			}
		}
	default:
		if !reflect.DeepEqual(a, b) {
			return "value"
		}
	}
	return ""
}

func sameNumber(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// sortedNumbers parses and sorts the numbers of a number set (an unparsable
// one counts as zero).
func sortedNumbers(ns []string) []*big.Rat {
	out := make([]*big.Rat, 0, len(ns))
	for _, n := range ns {
		r, ok := new(big.Rat).SetString(n)
		if !ok {
			r = new(big.Rat)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, (*big.Rat).Cmp)
	return out
}

func showAV(av types.AttributeValue) string {
	if av == nil {
		return "nothing"
	}
	var v any
	if err := attributevalue.Unmarshal(av, &v); err != nil {
		return fmt.Sprintf("%T", av)
	}
	return fmt.Sprintf("%T %v", av, v)
}

// normalizeV1 and normalizeV2 put the sets of a loaded item in the order of
// the fixture: DynamoDB does not keep the order of set elements.
func normalizeV1(it *javaV1Item) {
	slices.Sort(it.SS)
	slices.Sort(it.NS)
	slices.SortFunc(it.BS, bytes.Compare)
	sortUUIDs(it.UIDs)
	if it.Doc != nil {
		slices.Sort(it.Doc.Tags)
	}
	for i := range it.Docs {
		slices.Sort(it.Docs[i].Tags)
	}
}

func normalizeV2(it *javaV2Item) {
	slices.Sort(it.SS)
	slices.Sort(it.NS)
	slices.SortFunc(it.BS, bytes.Compare)
	sortUUIDs(it.UIDs)
}

// diffFields reports every field of got that differs from want, following
// pointers, slices, maps and structs; times are compared with Equal.
func diffFields(t *testing.T, what string, got, want any) {
	t.Helper()
	var diffs []string
	diffValue(&diffs, "", reflect.ValueOf(got), reflect.ValueOf(want))
	for _, d := range diffs {
		t.Errorf("%s: %s", what, d)
	}
}

var timeType = reflect.TypeFor[time.Time]()

func diffValue(diffs *[]string, path string, got, want reflect.Value) {
	if got.Type() == timeType {
		if !got.Interface().(time.Time).Equal(want.Interface().(time.Time)) {
			*diffs = append(*diffs, fmt.Sprintf("%s = %v, want %v", path, got.Interface(), want.Interface()))
		}
		return
	}
	switch got.Kind() {
	case reflect.Struct:
		for i := 0; i < got.NumField(); i++ {
			diffValue(diffs, path+"."+got.Type().Field(i).Name, got.Field(i), want.Field(i))
		}
		return
	case reflect.Pointer:
		if got.IsNil() || want.IsNil() {
			if got.IsNil() != want.IsNil() {
				*diffs = append(*diffs, fmt.Sprintf("%s = %v, want %v", path, got.Interface(), want.Interface()))
			}
			return
		}
		diffValue(diffs, path, got.Elem(), want.Elem())
		return
	case reflect.Slice:
		if got.Type().Elem().Kind() == reflect.Struct && got.Len() == want.Len() {
			for i := 0; i < got.Len(); i++ {
				diffValue(diffs, fmt.Sprintf("%s[%d]", path, i), got.Index(i), want.Index(i))
			}
			return
		}
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		*diffs = append(*diffs, fmt.Sprintf("%s = %#v, want %#v", path, got.Interface(), want.Interface()))
	}
}

// javaLibDir returns DynamoDB Local's DynamoDBLocal_lib folder (installing
// DynamoDB Local if needed) and checks that the jars of both Java clients
// are there.
func javaLibDir(t *testing.T) string {
	t.Helper()
	dir, err := dynamotest.LocalDir(t.Context())
	if err != nil {
		t.Fatalf("the Java interop test needs the Java SDK jars DynamoDB Local ships: %v", err)
	}
	lib := filepath.Join(dir, "DynamoDBLocal_lib")
	for _, pattern := range []string{"aws-java-sdk-dynamodb-*.jar", "AwsJavaSdk-DynamoDb-Enhanced-*.jar"} {
		if m, _ := filepath.Glob(filepath.Join(lib, pattern)); len(m) == 0 {
			t.Fatalf("the Java interop test needs the Java SDK jars DynamoDB Local ships, but %s has no %s: "+
				"to fix, run scripts/install-dynamodb-local.sh (it installs DynamoDB Local into %s), "+
				"or set DYNAMODB_LOCAL_DIR to a DynamoDB Local install folder", lib, pattern, dir)
		}
	}
	return lib
}

// compileJava compiles java/Interop.java against the jars in lib into a
// temporary folder and returns it.
func compileJava(t *testing.T, lib string) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatalf("the Java interop test needs javac, which is not on PATH: to fix, install a JDK 17 or newer " +
			"(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless)")
	}
	out := t.TempDir()
	cmd := exec.CommandContext(ctx(t), javac, "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1",
		"-proc:none", "-nowarn", "-encoding", "UTF-8", "-cp", filepath.Join(lib, "*"), "-d", out,
		filepath.Join("java", "Interop.java"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac java/Interop.java: %v\n%s", err, msg)
	}
	return out
}

// javaProc is the running Java side: one JVM answering one command per line.
type javaProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
}

func startJava(t *testing.T, lib, classes string, args ...string) *javaProc {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("the Java interop test needs java, which is not on PATH: to fix, install Java 17 or newer " +
			"(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless)")
	}
	cmd := exec.Command(java, append([]string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"-Dorg.apache.commons.logging.Log=org.apache.commons.logging.impl.NoOpLog",
		"-Daws.java.v1.disableDeprecationAnnouncement=true",
		"-cp", classes + string(os.PathListSeparator) + filepath.Join(lib, "*"), "Interop"}, args...)...)
	p := &javaProc{cmd: cmd, lines: make(chan string, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting java: %v", err)
	}
	t.Cleanup(func() {
		_ = p.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	if got := p.read(t, "start"); got != "ready" {
		t.Fatalf("java Interop started with %q, want ready; its stderr:\n%s", got, p.stderr)
	}
	return p
}

const javaTimeout = 2 * time.Minute

func (p *javaProc) read(t *testing.T, what string) string {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("java Interop exited during %s; its stderr:\n%s", what, p.stderr)
		}
		return line
	case <-time.After(javaTimeout):
		t.Fatalf("java Interop gave no answer to %s within %v; its stderr:\n%s", what, javaTimeout, p.stderr)
	}
	return ""
}

// expect sends a command and fails the test unless the answer is want.
func (p *javaProc) expect(t *testing.T, want, format string, args ...any) {
	t.Helper()
	command := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(p.stdin, command); err != nil {
		t.Fatalf("java Interop: sending %q: %v; its stderr:\n%s", command, err, p.stderr)
	}
	if got := p.read(t, command); got != want {
		t.Fatalf("java Interop %q answered %q, want %q", command, got, want)
	}
}

// expectPrefix sends a command and fails the test unless the answer starts
// with want.
func (p *javaProc) expectPrefix(t *testing.T, want, format string, args ...any) {
	t.Helper()
	command := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(p.stdin, command); err != nil {
		t.Fatalf("java Interop: sending %q: %v; its stderr:\n%s", command, err, p.stderr)
	}
	if got := p.read(t, command); !strings.HasPrefix(got, want) {
		t.Fatalf("java Interop %q answered %q, want %q...", command, got, want)
	}
}

func (p *javaProc) quit(t *testing.T) {
	if _, err := fmt.Fprintln(p.stdin, "quit"); err != nil {
		t.Errorf("java Interop: quit: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer safe for the writes of a process and the
// reads of a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 64<<10 {
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// javaOrder is an order as a Java service stores it with DynamoDBMapper.
type javaOrder struct {
	Customer string         `dynamo:"customer,hash"`
	ID       int            `dynamo:"id,range"`
	Paid     bool           `dynamo:"paid,javabool"`
	At       time.Time      `dynamo:"at,javadate"`
	Shipped  time.Time      `dynamo:"shipped,javadate,omitempty"` // a null Date until shipped
	Seen     time.Time      `dynamo:"seen,omitempty"`
	Dotted   int            `dynamo:"a.b"`
	Extra    map[string]any `dynamo:"extra"`
	Version  int64          `dynamo:"version,version"`
}

// TestJavaConditionsAndFilters checks against DynamoDB Local that filters and
// If conditions on javabool and javadate attributes match what is stored
// (issue 12 item 9), that a failed If names its condition, that
// expression.Name("a.b") names the attribute "a.b", that zero times tagged
// omitempty are left out and that numbers in map[string]any survive a load
// and a save (item 10). It needs no Java.
func TestJavaConditionsAndFilters(t *testing.T) {
	client := dynamotest.Client(t)
	tb := javaTable[javaOrder](t, dynamo.NewMapper(client), client, "orders")
	c := ctx(t)
	when := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	var saved []javaOrder
	for i := range 4 {
		o, err := tb.Save(c, javaOrder{Customer: "c", ID: i, Paid: i%2 == 1, At: when.Add(time.Duration(i) * time.Hour), Dotted: i,
			Extra: map[string]any{"max": attributevalue.Number("9223372036854775807"), "i": i}})
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, o)
	}
	ids := func(seq func(func(javaOrder, error) bool)) []int {
		t.Helper()
		var out []int
		for o, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o.ID)
		}
		slices.Sort(out)
		return out
	}
	paid := expression.Name("paid").Equal(expression.Value(true))
	if got := ids(tb.Scan(c, dynamo.Filter(paid))); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("Scan Filter paid = true: %v, want [1 3]", got)
	}
	key := expression.Key("customer").Equal(expression.Value("c"))
	if got := ids(tb.Query(c, key, dynamo.Filter(expression.Name("paid").Equal(expression.Value(false))))); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("Query Filter paid = false: %v, want [0 2]", got)
	}
	after := expression.Name("at").GreaterThan(expression.Value(when.Add(90 * time.Minute)))
	if got := ids(tb.Query(c, key, dynamo.Filter(after))); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("Query Filter at > when+90m: %v, want [2 3]", got)
	}
	between := expression.Name("at").Between(expression.Value(when), expression.Value(when.Add(time.Hour)))
	if got := ids(tb.Scan(c, dynamo.Filter(between), dynamo.Filter(paid))); !slices.Equal(got, []int{1}) {
		t.Errorf("Scan Filter at between and paid: %v, want [1]", got)
	}
	if got := ids(tb.Scan(c, dynamo.Filter(expression.Name("a.b").GreaterThanEqual(expression.Value(2))))); !slices.Equal(got, []int{2, 3}) {
		t.Errorf(`Scan Filter Name("a.b") >= 2: %v, want [2 3]`, got)
	}

	// If on the same attributes.
	o := saved[1]
	o.Dotted = 10
	if o, err := tb.Save(c, o, dynamo.If(paid), dynamo.If(expression.Name("at").Equal(expression.Value(o.At))),
		dynamo.If(expression.Name("a.b").Equal(expression.Value(1)))); err != nil {
		t.Fatalf("Save If paid and at and a.b on a matching item: %v", err)
	} else {
		saved[1] = o
	}
	_, err := tb.Save(c, saved[0], dynamo.If(paid))
	if !errors.Is(err, dynamo.ErrConditionFailed) {
		t.Fatalf("Save If paid = true on an unpaid order: %v, want ErrConditionFailed", err)
	}
	mustContain(t, err, "the If condition failed: paid = 1")
	if err := tb.Delete(c, saved[0], dynamo.If(expression.Name("paid").Equal(expression.Value(false)))); err != nil {
		t.Errorf("Delete If paid = false on an unpaid order: %v", err)
	}

	// Zero times tagged omitempty are not stored; numbers in any keep their digits.
	raw := rawOrder(t, client, tb.Name(), 3)
	for _, gone := range []string{"shipped", "seen"} {
		if av, ok := raw[gone]; ok {
			t.Errorf("zero %s stored as %v, want it left out", gone, av)
		}
	}
	loaded, err := tb.Load(c, javaOrder{Customer: "c", ID: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(c, loaded); err != nil {
		t.Fatal(err)
	}
	raw = rawOrder(t, client, tb.Name(), 3)
	if m := raw["extra"].(*types.AttributeValueMemberM).Value; m["max"].(*types.AttributeValueMemberN).Value != "9223372036854775807" {
		t.Errorf("after load and save, extra.max = %v, want 9223372036854775807", m["max"])
	}
}

func rawOrder(t *testing.T, client *dynamodb.Client, table string, id int) map[string]types.AttributeValue {
	t.Helper()
	out, err := client.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"customer": &types.AttributeValueMemberS{Value: "c"}, "id": &types.AttributeValueMemberN{Value: strconv.Itoa(id)}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}
