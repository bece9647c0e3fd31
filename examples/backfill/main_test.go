package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ddbkit/dynamo/backfill"
	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestBackfill runs the demo on 1000 items: it must end with every item
// changed and every live write kept, having shown the progress bar with an
// estimate of the time left on the way and the full bar at the end.
func TestBackfill(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Endpoint(t), 1000); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "all 1000 customers have their tier") {
		t.Errorf("output:\n%s", out.String())
	}
	frames := strings.Split(out.String(), "\r")
	estimated := false
	for _, f := range frames {
		if m := leftRE.FindStringSubmatch(f); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
				estimated = true
			}
		}
	}
	if !estimated {
		t.Errorf("no progress frame showed an estimate of the time left:\n%s", out.String())
	}
	if last := frames[len(frames)-1]; !strings.Contains(last, "[##############################] 100% 1000/1000  segments 8/8  left 0s") {
		t.Errorf("the last frame is not the full bar with nothing left: %q", last)
	}
	t.Log("\n" + out.String())
}

var leftRE = regexp.MustCompile(`left (\S+)`)

// TestBar: the bar fills with the items done out of all, and shows the
// estimate of the time left, or "?" while there is none.
func TestBar(t *testing.T) {
	for _, tc := range []struct {
		p    backfill.Progress[Customer]
		want string
	}{
		{backfill.Progress[Customer]{Segments: 8, Remaining: -1},
			"[..............................]   0% 0/200  segments 0/8  left ?   "},
		{backfill.Progress[Customer]{Changed: 80, Unchanged: 10, Skipped: 5, Failed: 5, Segments: 8, SegmentsDone: 3, Remaining: 1500 * time.Millisecond},
			"[###############...............]  50% 100/200  segments 3/8  left 1.5s   "},
		{backfill.Progress[Customer]{Changed: 200, Segments: 8, SegmentsDone: 8},
			"[##############################] 100% 200/200  segments 8/8  left 0s   "},
	} {
		if got := bar(tc.p, 200); got != tc.want {
			t.Errorf("bar(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
