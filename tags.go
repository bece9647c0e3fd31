package dynamo

import "github.com/ddbkit/dynamo/internal/codec"

// Struct tags. The mapper reads `dynamo:"name,opt,..."` (TagKey), a field's
// `dynamodbav` tag, and the secondary-index tags `index:"Name,hash"`,
// `index:"Name,range"` and `localIndex:"Name,range"`; the package doc
// ("Struct tags") lists every option. The rules — parsing, the checks that
// refuse a tag doing nothing, the schema built from a struct's fields — are
// in internal/schema (tags.go, schema.go), pure and fuzzed there.

// TagKey is the struct tag the mapper reads: `dynamo:"name,opt,..."` (with
// a field's `dynamodbav` tag: see "Struct tags" in docs/mapper.md).
const TagKey = codec.TagKey
