package schema

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag     string
		want    tagOptions
		wantErr string
	}{
		{tag: "", want: tagOptions{}},
		{tag: "-", want: tagOptions{skip: true}},
		{tag: "-,", want: tagOptions{name: "-"}, wantErr: "empty option"},
		{tag: "ISBN,hash", want: tagOptions{name: "ISBN", hash: true}},
		{tag: ",range", want: tagOptions{Range: true}},
		{tag: "version,version", want: tagOptions{name: "version", Version: true}},
		{tag: "exp,ttl,unixtime", want: tagOptions{name: "exp", ttl: true, UnixTime: true}},
		{tag: "tags,set,omitempty", want: tagOptions{name: "tags", set: true, OmitEmpty: true}},
		{tag: "a,omitemptyelem,nullempty,nullemptyelem,string", want: tagOptions{name: "a", omitEmptyElem: true, nullEmpty: true, nullEmptyElem: true, AsString: true}},
		{tag: "a,stringset", want: tagOptions{name: "a", StringSet: true}},
		{tag: "a,numberset", want: tagOptions{name: "a", NumberSet: true}},
		{tag: "a,binaryset", want: tagOptions{name: "a", BinarySet: true}},
		{tag: "a,hsah", wantErr: `unknown option "hsah"`},
		{tag: "a,hash,hash", wantErr: `repeated`},
		{tag: "a,hash,range", wantErr: "both hash and range"},
		{tag: "v,version,hash", wantErr: "makes a key the version"},
		{tag: "v,version,string", wantErr: "remove \"string\""},
		{tag: "v,version,omitempty", wantErr: "remove omitempty"},
		{tag: "s,set,stringset", wantErr: "more than one set kind"},
		{tag: "a,", wantErr: "empty option"},
		{tag: "flag,javabool", want: tagOptions{name: "flag", JavaBool: true}},
		{tag: "at,javadate,omitempty", want: tagOptions{name: "at", javaDate: true, OmitEmpty: true}},
		{tag: "at,hash,javadate", want: tagOptions{name: "at", hash: true, javaDate: true}},
		{tag: "a,javabool,javadate", wantErr: "both javabool and javadate"},
		{tag: "a,javabool,javabool", wantErr: "repeated"},
		{tag: "a,javabool,string", wantErr: `remove "string"`},
		{tag: "a,javadate,unixtime", wantErr: "keep one"},
		{tag: "a,javadate,set", wantErr: "use a list"},
		{tag: "a,stringset,javadate", wantErr: "use a list"},
		{tag: "a,javabool,numberset", wantErr: "no sets of booleans"},
		{tag: "a,javaBool", wantErr: `unknown option "javaBool"`},
	}
	for _, tc := range tests {
		got, err := ParseTag(tc.tag)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseTag(%q) error = %v, want it to contain %q", tc.tag, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseTag(%q): %v", tc.tag, err)
			continue
		}
		if got != tc.want {
			t.Errorf("parseTag(%q) = %+v, want %+v", tc.tag, got, tc.want)
		}
	}
}

// FuzzParseTag checks that no tag panics, that accepted tags keep their
// name, and that rejected tags name the problem.
func FuzzParseTag(f *testing.F) {
	for _, s := range []string{"", "-", "a,hash", "v,version", "x,set,omitempty", "a,,b", "a,hash,range", "é,ttl,unixtime", "b,javabool", "d,javadate,omitempty",
		"v,version,versionstart=100,versionstep=10", "v,version,versionstart=clock", "v,versionstep=0,version", "v,version,versionstart=99999999999999999999",
		"c,created", "m,modified,unixtime", "c,created,modified", "c,created,ttl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		o, err := ParseTag(tag)
		if err != nil {
			if !strings.Contains(err.Error(), "tag") && !strings.Contains(err.Error(), "option") {
				t.Fatalf("error %q does not say what is wrong", err)
			}
			return
		}
		name, _, _ := strings.Cut(tag, ",")
		if !o.skip && o.name != name {
			t.Fatalf("name = %q, want %q", o.name, name)
		}
		if o.skip && tag != "-" {
			t.Fatalf("skip for %q", tag)
		}
		if o.hash && o.Range || o.Version && (o.hash || o.Range) ||
			o.JavaBool && o.javaDate || (o.JavaBool || o.javaDate) && (o.AsString || o.UnixTime || o.set || o.StringSet || o.NumberSet || o.BinarySet) {
			t.Fatalf("contradictory options accepted: %+v", o)
		}
		if (o.VersionStart != 0 || o.VersionStep != 0 || o.VersionClock) && !o.Version ||
			o.VersionStart < 0 || o.VersionStep < 0 || o.VersionClock && o.VersionStart != 0 {
			t.Fatalf("bad version settings accepted: %+v", o)
		}
		if (o.created || o.modified) && (o.created && o.modified || o.hash || o.Range || o.Version || o.ttl || o.AsString ||
			o.set || o.StringSet || o.NumberSet || o.BinarySet) {
			t.Fatalf("contradictory timestamp options accepted: %+v", o)
		}
	})
}
func TestParseIndexTag(t *testing.T) {
	tests := []struct {
		tag     string
		want    []IndexKey
		wantErr string
	}{
		{tag: "", want: nil},
		{tag: "   ", want: nil},
		{tag: "ByTitle,hash", want: []IndexKey{{Name: "ByTitle"}}},
		{tag: "ByTitle,range", want: []IndexKey{{Name: "ByTitle", Range: true}}},
		{tag: "a-b.c_d,partition", want: []IndexKey{{Name: "a-b.c_d"}}},
		{tag: "Seq-ID-index,sort", want: []IndexKey{{Name: "Seq-ID-index", Range: true}}},
		{tag: "ByTitle,hash  ByYear,range", want: []IndexKey{{Name: "ByTitle"}, {Name: "ByYear", Range: true}}},
		{tag: " ByTitle,hash\tByYear,range ", want: []IndexKey{{Name: "ByTitle"}, {Name: "ByYear", Range: true}}},
		{tag: strings.Repeat("x", 255) + ",hash", want: []IndexKey{{Name: strings.Repeat("x", 255)}}},
		{tag: strings.Repeat("x", 256) + ",hash", wantErr: "has 256 characters"},
		{tag: "ab,hash", wantErr: "3 to 255"},
		{tag: "ByTitle", wantErr: "no key role"},
		{tag: "ByTitle,", wantErr: `unknown key role ""`},
		{tag: "ByTitle,hash,range", wantErr: `unknown key role "hash,range"`},
		{tag: "ByTitle,hash,ByYear,range", wantErr: "separate indexes with spaces"},
		{tag: ",hash", wantErr: "3 to 255"},
		{tag: "By Title,hash", wantErr: "no key role"},
		{tag: "Bý,hash", wantErr: "contains"},
		{tag: "ByTitle,hash ByTitle,range", wantErr: `index "ByTitle" named twice`},
		// Multi-attribute keys: the attribute's position in its role.
		{tag: "ByTS,hash,1", want: []IndexKey{{Name: "ByTS", Order: 1}}},
		{tag: "ByTS,sort,4 ByA,hash", want: []IndexKey{{Name: "ByTS", Range: true, Order: 4}, {Name: "ByA"}}},
		{tag: "ByTS,range,12", want: []IndexKey{{Name: "ByTS", Range: true, Order: 12}}}, // the schema refuses it
		{tag: "ByTS,hash,0", wantErr: `unknown key role "hash,0"`},
		{tag: "ByTS,hash,01", wantErr: `unknown key role "hash,01"`},
		{tag: "ByTS,hash,100", wantErr: `unknown key role "hash,100"`},
		{tag: "ByTS,hash,-1", wantErr: `unknown key role "hash,-1"`},
		{tag: "ByTS,hash,1,2", wantErr: `unknown key role "hash,1,2"`},
		{tag: "ByTS,1", wantErr: `unknown key role "1"`},
		{tag: "ByTS,hash,1 ByTS,hash,2", wantErr: `index "ByTS" named twice`},
	}
	for _, tc := range tests {
		got, err := ParseIndexTag(tc.tag)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseIndexTag(%q) error = %v, want it to contain %q", tc.tag, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseIndexTag(%q): %v", tc.tag, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseIndexTag(%q) = %+v, want %+v", tc.tag, got, tc.want)
		}
	}
}

// FuzzParseIndexTag checks that no tag panics, that an accepted tag yields
// one valid, distinct index name per space-separated entry, each read back
// from the entry, and that rejected tags say what is wrong.
func FuzzParseIndexTag(f *testing.F) {
	for _, s := range []string{"", "ByTitle,hash", "ByTitle,hash ByYear,range", "a-b.c,sort", "abc,partition",
		"ab,hash", "ByTitle", "x,hash,range", "ByTS,hash,1 ByX,range,2", "ByTS,sort,03", "Idx,hash Idx,range", "é-index,hash", "\tabc,range\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		keys, err := ParseIndexTag(tag)
		if err != nil {
			if keys != nil {
				t.Fatalf("keys %v returned with error %v", keys, err)
			}
			if !strings.Contains(err.Error(), "tag") || !strings.Contains(err.Error(), "index") {
				t.Fatalf("error %q does not say what is wrong", err)
			}
			return
		}
		entries := strings.Fields(tag)
		if len(keys) != len(entries) {
			t.Fatalf("%d keys from %d entries", len(keys), len(entries))
		}
		seen := map[string]bool{}
		for i, k := range keys {
			if CheckIndexName(k.Name) != nil {
				t.Fatalf("invalid index name %q accepted", k.Name)
			}
			if seen[k.Name] {
				t.Fatalf("index %q accepted twice", k.Name)
			}
			seen[k.Name] = true
			name, role, _ := strings.Cut(entries[i], ",")
			role, order, numbered := strings.Cut(role, ",")
			wantRng := role == "range" || role == "sort"
			if numbered != (k.Order != 0) || numbered && (order != strconv.Itoa(k.Order) || k.Order < 1 || k.Order > 99) {
				t.Fatalf("entry %q parsed with order %d", entries[i], k.Order)
			}
			if name != k.Name || k.Range != wantRng || !wantRng && role != "hash" && role != "partition" {
				t.Fatalf("entry %q parsed as %+v", entries[i], k)
			}
		}
	})
}
