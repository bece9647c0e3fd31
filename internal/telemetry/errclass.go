package telemetry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Class is a kind of error named in error.type: the errors that wrap Err
// are of the kind Name.
type Class struct {
	Err  error
	Name string
}

// MapperErrorClass names the kind of an error of the mapper (package
// dynamo's classes, then the context's, then the Go type: ErrorClass with
// the mapper's classes). Package dynamo sets it, as OfMapper; nil leaves
// the context's classes and the Go type.
var MapperErrorClass func(err error) string

// ErrorClass names the kind of err for error.type — never its message,
// which names keys and values: the Name of the first of classes err wraps,
// else the mapper's class of err (MapperErrorClass). lease and commitlog
// pass their own sentinels first; an error they return from the mapper is
// named as the mapper names it.
func ErrorClass(err error, classes ...Class) string {
	for _, c := range classes {
		if errors.Is(err, c.Err) {
			return c.Name
		}
	}
	if MapperErrorClass != nil {
		return MapperErrorClass(err)
	}
	return ContextClass(err)
}

// ContextClass is the class of an error the context ended ("canceled",
// "deadline_exceeded"), else the Go type of the error err wraps (of err
// when it wraps none), the last resort of every ErrorClass. The wrappers
// fmt.Errorf makes are looked through, so that an error wrapped again (a
// mapper's error a lease or a commit log returns with its own words) is
// named as the error it wraps is.
func ContextClass(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	u := errors.Unwrap(err)
	if u == nil {
		return fmt.Sprintf("%T", err)
	}
	for reflect.TypeOf(u) == fmtWrapError {
		next := errors.Unwrap(u)
		if next == nil {
			break
		}
		u = next
	}
	return fmt.Sprintf("%T", u)
}

// fmtWrapError is the type of the error fmt.Errorf returns with one %w.
var fmtWrapError = reflect.TypeOf(fmt.Errorf("%w", errors.New("")))
