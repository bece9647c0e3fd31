package codec

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// checkSameTimeText fails unless sameTimeText(t, s) is the comparison with
// the text the encoder writes (RFC3339Nano), and reports what it said.
func checkSameTimeText(t *testing.T, tm time.Time, s string) bool {
	t.Helper()
	want := tm.Format(time.RFC3339Nano) == s
	if got := sameTimeText(tm, s); got != want {
		t.Fatalf("sameTimeText(%s [%v, %d.%09d], %q) = %v, want %v", tm.Format(time.RFC3339Nano), tm.Location(), tm.Unix(), tm.Nanosecond(), s, got, want)
	}
	return want
}

// nearTexts are texts close to s, the RFC3339Nano text of a time: each
// byte replaced, digits moved by one, the fraction padded, cut and given
// a trailing zero, the zone spelled otherwise, s cut and lengthened.
func nearTexts(rng *rand.Rand, s string) []string {
	out := []string{s, s + "0", s[:len(s)-1], s[:len(s)-1] + "+00:00", s[:len(s)-1] + "z", strings.Replace(s, "T", "t", 1), " " + s, ""}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		out = append(out, s[:i]+"Z", s[:len(s)-1]+"0Z", s[:i]+".0Z", s[:i]+".000000000Z")
	} else if len(s) == 20 {
		out = append(out, s[:19]+".0Z", s[:19]+".000000000Z", s[:19]+".1Z", s[:19]+".Z")
	}
	for range 6 {
		b := []byte(s)
		i := rng.IntN(len(b))
		switch rng.IntN(3) {
		case 0:
			b[i] = byte(rng.IntN(256))
		case 1:
			b[i] = '0' + byte(rng.IntN(10))
		case 2:
			if b[i] >= '0' && b[i] <= '8' {
				b[i]++
			}
		}
		out = append(out, string(b))
	}
	return out
}

// randomTime is a time of years about -50 to 10 050 (around both ends
// of the years 0–9999 sameTimeText reads), near a month's or a day's end
// or not, with a nanosecond of 0 to 9 significant digits, in UTC or in
// another zone (among them zones of offset 0 that are not UTC).
func randomTime(rng *rand.Rand) time.Time {
	var sec int64
	switch rng.IntN(4) {
	case 0: // around year 0
		sec = minRFC3339Unix + rng.Int64N(4*366*86400) - 2*366*86400
	case 1: // around year 9999's end
		sec = maxRFC3339Unix + rng.Int64N(4*366*86400) - 2*366*86400
	case 2: // the turn of a day, anywhere in the range
		sec = (minRFC3339Unix + rng.Int64N(maxRFC3339Unix-minRFC3339Unix)) / 86400 * 86400
		sec += rng.Int64N(3) - 1
	default:
		sec = minRFC3339Unix + rng.Int64N(maxRFC3339Unix-minRFC3339Unix)
	}
	ns := 0
	if d := rng.IntN(10); d > 0 {
		ns = rng.IntN(1_000_000_000)
		for range 9 - d {
			ns = ns / 10 * 10
		}
	}
	tm := time.Unix(sec, int64(ns))
	switch rng.IntN(6) {
	case 0:
		return tm.In(time.FixedZone("", 0))
	case 1:
		return tm.In(time.FixedZone("X", 5*3600+30*60))
	case 2:
		return tm.Local()
	}
	return tm.UTC()
}

// sameTimeText says of every text what comparing it with the text the
// encoder writes of the time says: for times in UTC in the years it reads
// (where it does not format), outside them, and in other zones, against
// the time's own text, the texts of the times a nanosecond, a second and a
// day away, and texts near those (nearTexts) — and the check is not
// vacuous: both answers come often on the path that reads.
func TestSameTimeTextIsFormatCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	read := [2]int{}
	for range 20000 {
		tm := randomTime(rng)
		var texts []string
		for _, d := range []time.Duration{0, time.Nanosecond, -time.Nanosecond, time.Second, 24 * time.Hour, -24 * time.Hour} {
			texts = append(texts, nearTexts(rng, tm.Add(d).Format(time.RFC3339Nano))...)
		}
		for _, s := range texts {
			eq := checkSameTimeText(t, tm, s)
			if u := tm.Unix(); tm.Location() == time.UTC && u >= minRFC3339Unix && u <= maxRFC3339Unix {
				if eq {
					read[1]++
				} else {
					read[0]++
				}
			}
		}
	}
	if read[0] < 10000 || read[1] < 1000 {
		t.Errorf("read %d texts unequal and %d equal: the test does not reach both", read[0], read[1])
	}
}

// FuzzSameTimeText is TestSameTimeTextIsFormatCompare from fuzz input: a
// time (Unix seconds, nanoseconds, zone) and a text.
func FuzzSameTimeText(f *testing.F) {
	f.Add(int64(1710428966), int64(535897000), byte(0), "2024-03-14T15:09:26.535897Z")
	f.Add(int64(minRFC3339Unix), int64(0), byte(0), "0000-01-01T00:00:00Z")
	f.Add(int64(maxRFC3339Unix), int64(999999999), byte(0), "9999-12-31T23:59:59.999999999Z")
	f.Add(int64(951782400), int64(0), byte(1), "2000-02-29T00:00:00Z")
	f.Fuzz(func(t *testing.T, sec, ns int64, zone byte, s string) {
		tm := time.Unix(sec, ns)
		switch zone % 3 {
		case 0:
			tm = tm.UTC()
		case 1:
			tm = tm.In(time.FixedZone("", 0))
		}
		checkSameTimeText(t, tm, s)
		for _, n := range nearTexts(rand.New(rand.NewPCG(uint64(sec), uint64(ns))), tm.Format(time.RFC3339Nano)) {
			checkSameTimeText(t, tm, n)
		}
	})
}
