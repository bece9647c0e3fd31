package dynamo

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/clock"
)

// TestNewMapperDefaults: a Mapper writes tokens under
// DefaultWriteTokenAttribute unless told another name or "" (off), reads
// the real clock unless given one (nil is the default), encodes through
// the compiled codecs unless given encoder or decoder options, and hands
// back the client it was given and its token attribute.
func TestNewMapperDefaults(t *testing.T) {
	db := silentDB()
	m := NewMapper(db)
	if m.opts.tokenAttr != DefaultWriteTokenAttribute || m.opts.clock != clock.Real() || !m.compiledEnc || !m.compiledDec {
		t.Errorf("defaults: token %q, clock %T, compiled %v/%v; want %q, the real clock, compiled codecs",
			m.opts.tokenAttr, m.opts.clock, m.compiledEnc, m.compiledDec, DefaultWriteTokenAttribute)
	}
	if m.Client() != Client(db) {
		t.Errorf("Client() = %v, want the client given", m.Client())
	}
	if got := NewMapper(db, WithWriteTokenAttribute("")).opts.tokenAttr; got != "" {
		t.Errorf("WithWriteTokenAttribute(\"\"): token attribute %q, want none", got)
	}
	for _, name := range []string{DefaultWriteTokenAttribute, "tok", ""} {
		if got := NewMapper(db, WithWriteTokenAttribute(name)).WriteTokenAttribute(); got != name {
			t.Errorf("WithWriteTokenAttribute(%q): WriteTokenAttribute() = %q, want it", name, got)
		}
	}
	if got := m.WriteTokenAttribute(); got != DefaultWriteTokenAttribute {
		t.Errorf("WriteTokenAttribute() = %q by default, want %q", got, DefaultWriteTokenAttribute)
	}
	if got := NewMapper(db, WithClock(nil)).opts.clock; got != clock.Real() {
		t.Errorf("WithClock(nil): clock %T, want the real clock", got)
	}
	fake := clock.NewFake(time.Unix(1e9, 0))
	if got := NewMapper(db, WithClock(fake)).opts.clock; got != clock.Clock(fake) {
		t.Errorf("WithClock(fake): clock %T, want the fake", got)
	}
	withEnc := NewMapper(db, WithEncoderOptions(func(*attributevalue.EncoderOptions) {}))
	withDec := NewMapper(db, WithDecoderOptions(func(*attributevalue.DecoderOptions) {}))
	if withEnc.compiledEnc || !withEnc.compiledDec || !withDec.compiledEnc || withDec.compiledDec {
		t.Errorf("compiled codecs with encoder options %v/%v, with decoder options %v/%v; want only the other side compiled",
			withEnc.compiledEnc, withEnc.compiledDec, withDec.compiledEnc, withDec.compiledDec)
	}
	if _, err := NewTable[Book](NewMapper(nil), "Books"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("NewTable over a Mapper without a client: %v, want ErrInvalidInput", err)
	}
}

// Mapper.WithClient keeps every option of the mapper it is called on and
// sends through the client given; the original mapper is unchanged.
func TestMapperWithClientKeepsOptions(t *testing.T) {
	db, other := silentDB(), silentDB()
	fake := clock.NewFake(time.Unix(1e9, 0))
	m := NewMapper(db, WithWriteTokenAttribute("tok"), WithClock(fake), WithDecoderOptions(func(*attributevalue.DecoderOptions) {}))
	w := m.WithClient(other)
	if w.Client() != Client(other) || m.Client() != Client(db) {
		t.Errorf("WithClient: clients %v and %v, want the one given and the original's unchanged", w.Client(), m.Client())
	}
	if w.WriteTokenAttribute() != "tok" || w.opts.clock != clock.Clock(fake) || !w.compiledEnc || w.compiledDec {
		t.Errorf("WithClient: token %q, clock %T, compiled %v/%v; want m's options (tok, the fake, encoder only)",
			w.WriteTokenAttribute(), w.opts.clock, w.compiledEnc, w.compiledDec)
	}
	if _, err := NewTable[Book](w, "Books"); err != nil {
		t.Errorf("NewTable over WithClient's mapper: %v", err)
	}
}

// TestMapperCodecOptions: the attributevalue encoder and decoder keep the
// dynamo tag whatever the caller's options set, skip nil option functions,
// and decode numbers into interface values as attributevalue.Number (its
// exact digits) unless an option turns UseNumber off.
func TestMapperCodecOptions(t *testing.T) {
	type rec struct {
		ID  string `dynamo:"id" json:"other"`
		Any any    `dynamo:"any"`
	}
	db := silentDB()
	m := NewMapper(db,
		WithEncoderOptions(nil), WithEncoderOptions(func(o *attributevalue.EncoderOptions) { o.TagKey = "json" }),
		WithDecoderOptions(nil), WithDecoderOptions(func(o *attributevalue.DecoderOptions) { o.TagKey = "json" }))
	item, err := m.enc.Encode(rec{ID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := item.(*types.AttributeValueMemberM).Value["id"]; !ok {
		t.Errorf("encoded %v, want the dynamo tag's name id", item)
	}
	stored := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "k"}, "any": &types.AttributeValueMemberN{Value: "9223372036854775807"}}}
	var got rec
	if err := m.dec.Decode(stored, &got); err != nil || got.ID != "k" || got.Any != attributevalue.Number("9223372036854775807") {
		t.Errorf("decoded %#v, %v; want id k and the number's digits as attributevalue.Number", got, err)
	}
	off := NewMapper(db, WithDecoderOptions(func(o *attributevalue.DecoderOptions) { o.UseNumber = false }))
	got = rec{}
	if err := off.dec.Decode(stored, &got); err != nil || got.Any != float64(9223372036854775807) {
		t.Errorf("UseNumber off: decoded %#v, %v; want a float64", got, err)
	}
}
