package dynamotest

import (
	"regexp"
	"strings"
	"testing"
)

// break2: the fix a bad DYNAMODB_ENDPOINT's message suggests must itself be
// an endpoint parseEndpoint accepts. For ":8000" it suggests "http://:8000"
// (refused: no host); for "//localhost:8000" it suggests
// "http:////localhost:8000".
func TestBreak2EndpointHintParses(t *testing.T) {
	hint := regexp.MustCompile(`(?:e\.g\.|write it as) (https?://\S+)`)
	for _, v := range []string{":8000", "//localhost:8000", "localhost:8000", "localhost", "http://", "ftp://x"} {
		err := parseEndpoint(v)
		if err == nil {
			t.Errorf("%q accepted", v)
			continue
		}
		for _, m := range hint.FindAllStringSubmatch(err.Error(), -1) {
			if strings.Contains(m[1], "host:port") {
				continue // a template, not a suggestion
			}
			if perr := parseEndpoint(m[1]); perr != nil {
				t.Errorf("DYNAMODB_ENDPOINT=%q: the message suggests %q, which is refused too: %v", v, m[1], perr)
			}
		}
	}
}
