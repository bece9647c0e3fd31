package dynamo

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// The mapper's differential test: a table encodes and decodes through the
// compiled codec, a table of a mapper with (no-op) encoder and decoder
// options through attributevalue alone. With the mapper's own steps —
// javabool, javadate, `set`, omitted zero times, the checks of
// checkEncoded (UTF-8, numbers, depth, set duplicates dropped) — both must
// give the same item, or both refuse it; and decode the same item into the
// same value.

type cfJava struct {
	On    bool                 `dynamo:"on,javabool"`
	Ons   []bool               `dynamo:"ons,javabool"`
	At    time.Time            `dynamo:"at,javadate"`
	AtO   time.Time            `dynamo:"ato,javadate,omitempty"`
	PAt   *time.Time           `dynamo:"pat,javadate"`
	Ats   []time.Time          `dynamo:"ats,javadate"`
	MAt   map[string]time.Time `dynamo:"mat,javadate"`
	Plain time.Time            `dynamo:"plain,omitempty"`
}

type CfEmbedded struct {
	Note  string `dynamo:"note,omitempty"`
	Count *int   `dynamo:"count"`
}

type cfItem struct {
	ID   string `dynamo:"id,hash"`
	Sort int64  `dynamo:"sort,range"`
	V    int64  `dynamo:"v,version"`
	*CfEmbedded
	Name  string                  `dynamo:"name"`
	Tags  []string                `dynamo:"tags,set"`
	Nums  []float64               `dynamo:"nums,set"`
	Bins  [][]byte                `dynamo:"bins,set,omitempty"`
	SS    []string                `dynamo:"ss,stringset"`
	NS    []uint16                `dynamo:"ns,numberset,omitempty"`
	BS    [][]byte                `dynamo:"bs"`
	Attrs map[string]string       `dynamo:"attrs,omitemptyelem"`
	MAny  map[string]any          `dynamo:"many"`
	Any   any                     `dynamo:"any"`
	Exp   time.Time               `dynamo:"exp,ttl,unixtime"`
	Made  time.Time               `dynamo:"made,omitempty"`
	F     float64                 `dynamo:"f"`
	F32   float32                 `dynamo:"f32,omitempty"`
	U     uint64                  `dynamo:"u,string"`
	Java  cfJava                  `dynamo:"java"`
	Javas []cfJava                `dynamo:"javas"`
	PJ    *cfJava                 `dynamo:"pj"`
	Raw   []byte                  `dynamo:"raw,nullempty"`
	Arr   [3]byte                 `dynamo:"arr"`
	Mar   codectest.Marsh         `dynamo:"mar"`
	NN    *string                 `dynamo:"nn,nullempty"`
	Deep  [][]map[string][]string `dynamo:"deep,omitemptyelem"`
}

type cfBench struct {
	ID        string            `dynamo:"id,hash"`
	Version   int64             `dynamo:"version,version"`
	Name      string            `dynamo:"name"`
	Age       int               `dynamo:"age"`
	Score     float64           `dynamo:"score"`
	Active    bool              `dynamo:"active"`
	Tags      []string          `dynamo:"tags,stringset"`
	Attrs     map[string]string `dynamo:"attrs"`
	Nickname  *string           `dynamo:"nickname"`
	CreatedAt time.Time         `dynamo:"created_at"`
}

var cfNames = []string{"id", "sort", "v", "note", "count", "name", "tags", "nums", "bins", "ss", "ns", "bs", "attrs", "many", "any",
	"exp", "made", "f", "f32", "u", "java", "javas", "pj", "raw", "arr", "mar", "nn", "deep", "on", "ons", "at", "ato", "pat", "ats",
	"mat", "plain", "version", "age", "score", "active", "nickname", "created_at", "ID", "Name"}

func noEncOpts(*attributevalue.EncoderOptions) {}
func noDecOpts(*attributevalue.DecoderOptions) {}

// cfTables returns a table of T through the codec and one through
// attributevalue alone.
func cfTables[T any](t *testing.T) (compiled, plain *Table[T]) {
	c := &benchClient{}
	compiled, err := NewTable[T](NewMapper(c), "T")
	if err != nil {
		t.Fatal(err)
	}
	plain, err = NewTable[T](NewMapper(c, WithEncoderOptions(noEncOpts), WithDecoderOptions(noDecOpts)), "T")
	if err != nil {
		t.Fatal(err)
	}
	if compiled.enc == nil || compiled.dec == nil || plain.enc != nil || plain.dec != nil {
		t.Fatalf("%T: codec use: compiled %v/%v, plain %v/%v", *new(T), compiled.enc != nil, compiled.dec != nil, plain.enc != nil, plain.dec != nil)
	}
	return compiled, plain
}

func cfCheck[T any](t *testing.T, data []byte) {
	compiled, plain := cfTables[T](t)
	g := &codectest.Gen{Data: data}
	var v T
	g.Fill(reflect.ValueOf(&v).Elem())
	got, gerr := compiled.encode(&v)
	want, werr := plain.encode(&v)
	if (gerr != nil) != (werr != nil) || gerr != nil && !errors.Is(gerr, ErrInvalidInput) {
		t.Fatalf("encode errors differ:\ncompiled %v\nplain    %v", gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("encoded items differ:\ncompiled %s\nplain    %s", fmtItem(got), fmtItem(want))
	}
	if gi, sz, err := compiled.encodeSized(&v, nil, false); err == nil {
		for _, put := range []bool{false, true} {
			for _, tok := range [][]byte{nil, make([]byte, 16)} {
				if a, b := compiled.sizeOf(gi, sz, 12345, tok, put), compiled.writtenSize(gi, 12345, tok, put); a != b {
					t.Fatalf("size counted while encoding %d, by writtenSize %d (put %v, token %v): %s", a, b, put, tok != nil, fmtItem(gi))
				}
			}
		}
	}
	items := []map[string]types.AttributeValue{want}
	if werr != nil {
		items = nil
	}
	// and an item of random attributes
	rnd := map[string]types.AttributeValue{}
	for n := int(g.Byte()) % 6; n >= 0 && g.Left() > 0; n-- {
		rnd[g.Name(cfNames)] = g.AV()
	}
	for k := range rnd {
		for k2 := range rnd {
			if k != k2 && strings.EqualFold(k, k2) {
				rnd = nil // attributevalue's result depends on map order
			}
		}
	}
	if rnd != nil {
		items = append(items, rnd)
	}
	for _, item := range items {
		gv, gerr, gp := decodeSafe(compiled, item)
		wv, werr, wp := decodeSafe(plain, item)
		if gp != wp {
			t.Fatalf("decode of %s panics: compiled %v, plain %v", fmtItem(item), gp, wp)
		}
		if gp {
			// attributevalue panics on some items (a B of another length
			// into a byte array): the same with or without the codec.
			continue
		}
		if (gerr != nil) != (werr != nil) {
			t.Fatalf("decode errors differ on %s:\ncompiled %v\nplain    %v", fmtItem(item), gerr, werr)
		}
		if gerr != nil {
			// Messages may differ: with two bad attributes, attributevalue
			// reports whichever map order meets first.
			continue
		}
		if !reflect.DeepEqual(gv, wv) && !sameEncoding(t, plain, gv, wv) {
			t.Fatalf("decoded values differ on %s:\ncompiled %+v\nplain    %+v", fmtItem(item), gv, wv)
		}
	}
}

func decodeSafe[T any](tb *Table[T], item map[string]types.AttributeValue) (v T, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	v, err = tb.decode(item)
	return v, err, false
}

// sameEncoding reports whether a and b, unequal to DeepEqual, encode alike
// and hold a NaN (which DeepEqual finds unequal to itself).
func sameEncoding[T any](t *testing.T, tb *Table[T], a, b T) bool {
	ea, erra := tb.encodeUnchecked(&a)
	eb, errb := tb.encodeUnchecked(&b)
	return erra == nil && errb == nil && reflect.DeepEqual(ea, eb) && strings.Contains(fmtItem(ea), "NaN")
}

// FuzzCodecTable checks, for values built from the input, that a table
// encodes and decodes through the compiled codec exactly as through
// attributevalue with the mapper's own steps.
func FuzzCodecTable(f *testing.F) {
	f.Add(byte(0), []byte("\x01\x02\x03abcdefghijklmnop\xff\xfe\x80\x81qrstuvwxyz0123456789"))
	f.Add(byte(1), []byte("\x05\x06\x07\x41\x42\x43abcdefghijklmnop\x11\x12\x13\x14\x15\x16\x17\x18\x19\x20"))
	f.Add(byte(2), []byte("\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09\x09"))
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		switch which % 4 {
		case 0:
			cfCheck[cfItem](t, data)
		case 1:
			cfCheck[cfBench](t, data)
		case 2:
			cfCheck[cfJava2](t, data)
		default:
			cfCheck[cfPtrVer](t, data)
		}
	})
}

// cfPtrVer has a pointer version, which may be NULL.
type cfPtrVer struct {
	ID string         `dynamo:"id,hash"`
	V  *uint32        `dynamo:"v,version"`
	S  string         `dynamo:"s,omitempty"`
	P  *string        `dynamo:"p"`
	M  map[string]int `dynamo:"m"`
}

// cfJava2 is a table whose own fields are Java-typed.
type cfJava2 struct {
	ID string `dynamo:"id,hash"`
	cfJava
	More []cfJava `dynamo:"more,omitempty"`
}

// TestCodecUsedForBench makes sure the benchmarked type goes through the
// compiled codec and that its item needs no second check.
func TestCodecUsedForBench(t *testing.T) {
	tbl := newBenchTable(t, &benchClient{})
	if tbl.enc == nil || tbl.dec == nil {
		t.Fatal("benchProfile is not compiled")
	}
	item := benchItem()
	if _, clean, _, err := tbl.encodeItem(&item, nil, false); err != nil || !clean {
		t.Fatalf("encodeItem: clean %v, err %v; want a clean item", clean, err)
	}
	item.Tags = []string{"a", "b", "a"}
	got, clean, _, err := tbl.encodeItem(&item, nil, false)
	if err != nil || clean {
		t.Fatalf("a set with a duplicate: clean %v, err %v; want it left to checkEncoded", clean, err)
	}
	if err := tbl.p.S.CheckEncoded(tbl.name, got); err != nil || len(got["tags"].(*types.AttributeValueMemberSS).Value) != 2 {
		t.Fatalf("checkEncoded after the codec: %v, tags %s", err, fmtAV(got["tags"]))
	}
	item.Score = math.NaN()
	if _, err := tbl.encode(&item); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "score") {
		t.Fatalf("NaN score: %v; want ErrInvalidInput naming score", err)
	}
	item.Score = 1
	item.Name = "bad \xff"
	if _, err := tbl.encode(&item); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("bad UTF-8: %v; want ErrInvalidInput", err)
	}
	if codec.For(reflect.TypeFor[cfItem]()) == nil {
		t.Fatal("cfItem is not compiled: FuzzCodecTable would test nothing")
	}
}

// TestCodecConcurrent encodes and decodes through one table from several
// goroutines (run with -race): the compiled codec shares only immutable
// state.
func TestCodecConcurrent(t *testing.T) {
	stored := benchItem()
	item, err := attributevalue.MarshalMapWithOptions(&stored, benchEncOpts)
	if err != nil {
		t.Fatal(err)
	}
	tbl := newBenchTable(t, &fakeDB{noStore: true, onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				in := benchItem()
				in.Visits = int64(g*1000 + i)
				saved, err := tbl.Save(context.Background(), in, WithSaveBehavior(SavePut))
				if err != nil || saved.Visits != in.Visits || saved.Version != 4 {
					t.Errorf("Save: %+v, %v", saved, err)
					return
				}
				got, err := tbl.Load(context.Background(), benchProfile{ID: in.ID})
				if err != nil || !reflect.DeepEqual(got, stored) {
					t.Errorf("Load: %+v, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
