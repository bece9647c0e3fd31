// Package readme holds the test that runs the README's example, exactly as
// the README writes it, against a fresh DynamoDB Local, with the environment
// the dynamodb-local command gives a program: so that the README's claim
// that it runs unchanged stays true.
package readme
