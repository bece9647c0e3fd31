package dynamotest

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	good := []string{"http://localhost:8000", "https://dynamodb.eu-west-1.amazonaws.com", "http://127.0.0.1:8000/", "http://[::1]:8000"}
	for _, v := range good {
		if err := parseEndpoint(v); err != nil {
			t.Errorf("parseEndpoint(%q) = %v, want nil", v, err)
		}
	}
	bad := []struct{ v, want string }{
		{"localhost:8000", "http://localhost:8000"},
		{"127.0.0.1:8000", "http://127.0.0.1:8000"},
		{"localhost", "no scheme"},
		{"ftp://localhost:8000", `scheme "ftp"`},
		{"http://", "no host"},
		{"http://:8000", "no host"},
		{"http:///x", "no host"},
		{" http://localhost:8000", "spaces"},
		{"http://localhost:0", "port"},
		{"http://localhost:70000", "port"},
		{"http://localhost:abc", "not a URL"},
	}
	for _, tc := range bad {
		err := parseEndpoint(tc.v)
		if err == nil {
			t.Errorf("parseEndpoint(%q) = nil, want an error", tc.v)
			continue
		}
		if !errors.Is(err, errBadEndpoint) || !strings.Contains(err.Error(), "DYNAMODB_ENDPOINT") ||
			!strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseEndpoint(%q) = %v; want errBadEndpoint naming DYNAMODB_ENDPOINT and %q", tc.v, err, tc.want)
		}
	}
}

// FuzzParseEndpoint: parseEndpoint never panics, accepts only http(s) URLs
// with a host, and every refusal names the variable.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"http://localhost:8000", "localhost:8000", "https://h", "http://:1", "ftp://x", "", "http://[::1]:8000", "http://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		err := parseEndpoint(v)
		if err != nil {
			if !errors.Is(err, errBadEndpoint) || !strings.Contains(err.Error(), "DYNAMODB_ENDPOINT") {
				t.Fatalf("parseEndpoint(%q) = %v: not errBadEndpoint naming the variable", v, err)
			}
			return
		}
		u, perr := url.Parse(v)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			t.Fatalf("parseEndpoint(%q) accepted a value without an http(s) scheme and a host", v)
		}
	})
}

// The fix a bad DYNAMODB_ENDPOINT's message suggests is itself an endpoint
// parseEndpoint accepts (for ":8000" not "http://:8000", which has no host;
// for "//localhost:8000" not "http:////localhost:8000").
func TestEndpointHintParses(t *testing.T) {
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
