// Command telemetry shows the spans and metrics the mapper reports through
// OpenTelemetry: it saves an item, makes two writers conflict so that
// Update retries, loads the item, and runs a transaction, with the SDK's
// tracer provider exporting every span to standard output (stdouttrace) and
// a manual metric reader whose data points it prints at the end (the
// stdoutmetric exporter is not used: it is not served at v1.47.0 here).
// The mapper's logger (slog, text to standard error) logs the few events an
// operator must see. docs/telemetry.md lists every name.
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT) and deletes the
// table it creates.
//
//	go run ./examples/telemetry
package main
