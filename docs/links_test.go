package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docRef is a reference to a guide in a doc comment or a message:
// docs/calls.md#update, or docs/mapper.md, "Queries".
var docRef = regexp.MustCompile(`docs/([a-z-]+\.md)(?:#([a-z0-9_-]+)|, "([^"]+)")?`)

// TestDocReferencesResolve checks that every guide the Go code names exists
// and holds the section it names, so that a doc comment shortened to a
// pointer never points at nothing.
func TestDocReferencesResolve(t *testing.T) {
	headings := map[string]map[string]bool{} // guide → heading text and its anchor
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range docRef.FindAllStringSubmatch(string(src), -1) {
			guide, anchor := m[1], m[2]
			title := strings.Join(strings.Fields(strings.ReplaceAll(m[3], "//", " ")), " ")
			h, ok := headings[guide]
			if !ok {
				h = readHeadings(guide)
				headings[guide] = h
			}
			switch {
			case h == nil:
				t.Errorf("%s names docs/%s, which does not exist", path, guide)
			case anchor != "" && !h["#"+anchor]:
				t.Errorf("%s names docs/%s#%s: no heading has that anchor", path, guide, anchor)
			case title != "" && !h[title]:
				t.Errorf("%s names docs/%s, %q: no heading says that", path, guide, title)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(headings) == 0 {
		t.Fatal("no reference to a guide found: the walk read no Go file")
	}
}

// readHeadings returns the headings of a guide, as written and as GitHub
// anchors ("#" + lower case, spaces to dashes, punctuation dropped), or nil
// when the guide does not exist.
func readHeadings(guide string) map[string]bool {
	src, err := os.ReadFile(guide)
	if err != nil {
		return nil
	}
	h := map[string]bool{}
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		h[text] = true
		var a strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				a.WriteRune(r)
			}
		}
		h["#"+a.String()] = true
	}
	return h
}
