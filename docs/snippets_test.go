// Package docs holds the guides. Its test compiles every Go snippet in them
// (and in the README) against the module's current API, so that a guide
// cannot name a call, an option or a field that does not exist.
package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	// The snippets load the SDK's configuration (config.LoadDefaultConfig):
	// imported here so that go.mod keeps the module they compile against.
	_ "github.com/aws/aws-sdk-go-v2/config"
)

// imports are offered to every snippet; the ones a snippet does not use are
// not an error (see tolerated).
const imports = `import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
	"github.com/ddbkit/dynamo/stream"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)
`

// preludes declare, per guide, what its snippets use without declaring:
// the tables, items and values the surrounding prose talks about.
var preludes = map[string]string{
	"common": `
var (
	ctx    context.Context
	client *dynamodb.Client
	m      *dynamo.Mapper
	cond   expression.ConditionBuilder
)
`,
	"porting-from-java.md": `
type Book struct {
	ISBN    string ` + "`dynamo:\"isbn,hash\"`" + `
	Title   string
	Stock   int
	Version int64 ` + "`dynamo:\"version,version\"`" + `
}

// UUID is a uuid-style text type.
type UUID [16]byte

func (u UUID) MarshalText() ([]byte, error)     { return []byte(fmt.Sprintf("%x", u[:])), nil }
func (u *UUID) UnmarshalText(b []byte) error    { return nil }

var (
	id     UUID
	books  *dynamo.Table[Book]
	b, old Book
	bs     []Book
	isbn   string
)
`,
	"commitlog.md": `
var (
	s3Client          *s3.Client
	ddbClient         *dynamodb.Client
	data, next, entry []byte
	info              commitlog.ObjectInfo
)
`,
	"telemetry.md": `
var (
	tp     trace.TracerProvider
	mp     metric.MeterProvider
	logger *slog.Logger
)
`,
	"leases.md": `
type Report struct {
	Name    string ` + "`dynamo:\"name,hash\"`" + `
	Version int64  ` + "`dynamo:\"v,version\"`" + `
}

type Stock struct {
	SKU     string ` + "`dynamo:\"sku,hash\"`" + `
	Count   int64
	Token   int64  ` + "`dynamo:\"token\"`" + `
	Version int64  ` + "`dynamo:\"v,version\"`" + `
}

var (
	reports *dynamo.Table[Report]
	report  Report
	stock   *dynamo.Table[Stock]
	work    func(context.Context) <-chan struct{}
)
`,
	"idempotency.md": `
type Meter struct {
	Customer string ` + "`dynamo:\"customer,hash\"`" + `
	Calls    int64  ` + "`dynamo:\"calls\"`" + `
	Version  int64  ` + "`dynamo:\"v,version\"`" + `
}

var (
	meters *dynamo.Table[Meter]
	ev     struct{ ID, Customer string }
)
`,
	"streams.md": `
type Order struct {
	ID      string ` + "`dynamo:\"id,hash\"`" + `
	Version int64  ` + "`dynamo:\"v,version\"`" + `
}

type View struct {
	ID      string ` + "`dynamo:\"id,hash\"`" + `
	Version int64  ` + "`dynamo:\"v,version\"`" + `
}

var (
	views *dynamo.Table[View]
	host  string
	cfg   aws.Config
)
`,
	"mapper.md": `
type Page struct {
	URL       string   ` + "`dynamo:\"url,hash\"`" + `
	Views     int64    ` + "`dynamo:\"views\"`" + `
	Referrers []string ` + "`dynamo:\"referrers,set\"`" + `
	Version   int64    ` + "`dynamo:\"v,version\"`" + `
}

var (
	pages  *dynamo.Table[Page]
	u, ref string
)
`,
	"tour.md": `
type Book struct {
	ISBN    string ` + "`dynamo:\"ISBN,hash\"`" + `
	Title   string
	Version int64 ` + "`dynamo:\"version,version\"`" + `
}
`,
	"transactions-batches-queries.md": `
type Book struct {
	ISBN    string ` + "`dynamo:\"isbn,hash\"`" + `
	Title   string
	Version int64 ` + "`dynamo:\"v,version\"`" + `
}
type Shelf struct {
	ID      string ` + "`dynamo:\"id,hash\"`" + `
	Label   string
	Version int64 ` + "`dynamo:\"v,version\"`" + `
}
type Loan struct {
	ID      string ` + "`dynamo:\"id,hash\"`" + `
	Version int64  ` + "`dynamo:\"v,version\"`" + `
}
type Author struct {
	ID      string ` + "`dynamo:\"id,hash\"`" + `
	Version int64  ` + "`dynamo:\"v,version\"`" + `
}
type Account struct {
	ID      string ` + "`dynamo:\"id,hash\"`" + `
	Balance int64
	Version int64 ` + "`dynamo:\"v,version\"`" + `
}
type Event struct {
	ID string ` + "`dynamo:\"id,hash\"`" + `
}

var (
	books                *dynamo.Table[Book]
	shelves              *dynamo.Table[Shelf]
	loans                *dynamo.Table[Loan]
	authors              *dynamo.Table[Author]
	accounts             *dynamo.Table[Account]
	events               *dynamo.Table[Event]
	book                 Book
	shelf                Shelf
	loan                 Loan
	author               Author
	a, b                 string
	amount               int64
	errInsufficientFunds error
	keys, imported       []Book
	evs                  []Event
	retry                func([]int)
	bonus                func(Account) (Account, error)
	fn                   func(*dynamo.Tx) error
	ops                  []dynamo.TxOp
)
`,
}

// tolerated are the compile errors a fragment may cause without being wrong:
// it is cut out of a longer program, which uses what it declares.
// raceBuild says the snippets are built with -race (see race_test.go).
var raceBuild bool

var tolerated = regexp.MustCompile(`declared and not used|imported and not used|no new variables on left side`)

var (
	goBlock      = regexp.MustCompile("(?s)```go\n(.*?)```")
	topLevelFunc = regexp.MustCompile(`(?m)^func `)
)

// TestGoSnippetsCompile compiles the Go code blocks of the README and of
// every guide in this folder. A block that is a whole file (it starts with
// `package`) is compiled as it is, one that declares functions as the top
// level of a file; any other is a fragment, compiled as the body of a
// function returning error, next to the guide's prelude.
func TestGoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the snippets with the go command")
	}
	guides, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	guides = append(guides, "../README.md")
	// The packages are built inside the module, so that its imports
	// resolve; a folder whose name starts with a dot is no part of ./...
	root, err := os.MkdirTemp("..", ".snippets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	type snippet struct{ guide, code, dir string }
	var snippets []snippet
	for _, g := range guides {
		text, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goBlock.FindAllStringSubmatch(string(text), -1) {
			code := m[1]
			dir := filepath.Join(root, fmt.Sprintf("s%02d", len(snippets)))
			var src string
			switch {
			case strings.HasPrefix(code, "package "):
				src = code
			case topLevelFunc.MatchString(code):
				// Declarations: they stand at the top level.
				src = "package snippet\n\n" + imports + "import \"testing\"\n" + preludes["common"] + code
			default:
				name := strings.ReplaceAll(filepath.Base(g), "\\", "/")
				body := strings.ReplaceAll(code, "ErrInsufficientFunds", "errInsufficientFunds")
				src = "package snippet\n\n" + imports + preludes["common"] + preludes[name] +
					"\nfunc snippet() error {\n" + body + "\nreturn nil\n}\n"
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			snippets = append(snippets, snippet{g, code, dir})
		}
	}
	if len(snippets) < 10 {
		t.Fatalf("found %d Go snippets in %v: the pattern no longer finds them", len(snippets), guides)
	}
	args := []string{"build", "-o", os.DevNull, "-gcflags=-e"}
	if raceBuild {
		args = append(args, "-race")
	}
	for _, s := range snippets {
		args = append(args, "./"+filepath.Base(root)+"/"+filepath.Base(s.dir))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // judged by what it printed: some errors are tolerated
	for _, line := range strings.Split(out.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || tolerated.MatchString(line) || strings.Contains(line, "too many errors") {
			continue
		}
		if strings.Contains(line, "build output") && strings.Contains(line, "multiple packages") {
			continue // -o with several packages: each is still compiled
		}
		s := snippetOf(line, snippets, root)
		if s == nil {
			t.Errorf("go build: %s", line)
			continue
		}
		t.Errorf("a Go snippet of %s does not compile: %s\n%s", s.guide, line, s.code)
	}
}

// snippetOf returns the snippet whose file a compiler message names.
func snippetOf[S any](line string, snippets []S, root string) *S {
	base := filepath.Base(root)
	i := strings.Index(line, base+string(filepath.Separator)+"s")
	if i < 0 {
		return nil
	}
	var n int
	if _, err := fmt.Sscanf(line[i+len(base)+2:], "%02d", &n); err != nil || n >= len(snippets) {
		return nil
	}
	return &snippets[n]
}
