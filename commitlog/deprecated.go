package commitlog

// The package's old names, kept so that code written against them still
// compiles and works as before. Each says what to use instead.

// WithMaxClockSkewRate is WithClockSkewRate under its earlier name; it does
// the same.
//
// Deprecated: use WithClockSkewRate.
func WithMaxClockSkewRate(r float64) Option { return WithClockSkewRate(r) }
