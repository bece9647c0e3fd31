// Package schema holds the rules about a Go type's shape that the root
// package applies: struct tags parsed (tags.go) and checked against the
// fields (schema.go: keys, indexes, version settings, ttl, entity,
// timestamps, sets), the Java conventions (java.go), the value checks run
// before a request is sent (checkgo.go, checkitem.go, validate.go), and the
// conversion of values compared with attributes stored their own way
// (condvalues.go, condtext.go).
//
// It is pure: no I/O, no clock, no client. For builds a type's Schema once
// and caches it; everything else reads a Schema without locking. Errors
// users match wrap the sentinels of internal/errs, which the root package
// re-exports.
package schema
