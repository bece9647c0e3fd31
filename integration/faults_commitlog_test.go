package integration

// The commitlog part of the fault suite (see faults_test.go): Log appends and
// Committer.PutIfMatch increments by writers that each have their own faulty
// DynamoDB and S3 transports, and a reader that reads the log as it grows;
// checkLogFaults and checkCASCounter then check the record of what happened
// against the log and the object, read through clean clients.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

// logAppend is one Append call of TestFaultsCommitlog.
type logAppend struct {
	owner   string // the writer's WithOwner name, written into its claims
	payload string // distinct for every call
	version int64  // the version Append returned; 0 when it failed
	err     error  // nil: acknowledged; otherwise the entry may or may not be in the log
}

// logSeen is one entry read while the writers were appending.
type logSeen struct {
	version int64
	data    string
}

// logState is the log read through clean clients afterwards.
type logState struct {
	latest    int64                       // Log.Latest
	claims    map[int64]claimRecord       // the claims in the log table
	reads     map[int64]string            // Log.Read of versions 1..latest that succeeded
	readErrs  map[int64]error             // and of those that failed
	entries   []commitlog.Entry           // what Log.Entries(1) yielded
	entryErr  error                       // the error it yielded, if any
	objects   map[int64]string            // the entries' objects, listed and fetched from the store
	strangers []string                    // other objects under the log's prefix than entries and temporary objects
	temps     map[string]string           // the temporary objects left, by path
	paths     func(v int64) (path string) // Log.Path
}

// checkLogFaults checks the record of TestFaultsCommitlog against the log
// and returns every anomaly found:
//
//   - the claims are versions 1..Latest with no gap, and every one of them
//     reads back (Read, Entries, and the object listed under the log's
//     prefix all agree; nothing else is there but temporary objects);
//   - every version holds the payload of an Append that was tried, and its
//     claim names that Append's writer;
//   - every acknowledged payload is in the log exactly once, at the version
//     Append returned; no two Appends were told the same version;
//   - a failed Append's payload is in the log at most once;
//   - a version's content never changed: what the reader saw while the
//     writers were appending is what is there at the end.
func checkLogFaults(appends []logAppend, seen []logSeen, st logState) []string {
	var bad []string
	report := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if int64(len(st.claims)) != st.latest {
		report("%d claims in the table, but Latest is %d", len(st.claims), st.latest)
	}
	for v := range st.claims {
		if v < 1 || v > st.latest {
			report("claim of version %d outside 1..Latest (%d)", v, st.latest)
		}
	}
	tempOf := map[string]int64{}
	for v := int64(1); v <= st.latest; v++ {
		c, ok := st.claims[v]
		if !ok {
			report("gap: no claim of version %d (Latest %d)", v, st.latest)
		} else if o, dup := tempOf[c.Temp]; dup && c.Temp != "" {
			report("claims of versions %d and %d name the same temporary object %s", o, v, c.Temp)
		} else {
			tempOf[c.Temp] = v
		}
		if err, failed := st.readErrs[v]; failed {
			report("version %d cannot be read: %v", v, err)
			continue
		}
		data, ok := st.reads[v]
		if !ok {
			report("version %d was not read", v)
			continue
		}
		if obj, ok := st.objects[v]; !ok {
			report("version %d reads %q but its object %s is not listed", v, data, st.paths(v))
		} else if obj != data {
			report("version %d reads %q through the log and %q from its object", v, data, obj)
		}
	}
	for v := range st.objects {
		if v < 1 || v > st.latest {
			report("object of version %d outside 1..Latest (%d)", v, st.latest)
		}
	}
	for _, p := range st.strangers {
		report("unexpected object %s under the log's prefix", p)
	}
	if st.entryErr != nil {
		report("Entries: %v", st.entryErr)
	}
	if int64(len(st.entries)) != st.latest && st.entryErr == nil {
		report("Entries yielded %d entries, Latest is %d", len(st.entries), st.latest)
	}
	for i, e := range st.entries {
		if e.Version != int64(i+1) || string(e.Data) != st.reads[e.Version] {
			report("Entries yielded version %d (%q) in place %d; Read of it gave %q", e.Version, e.Data, i+1, st.reads[e.Version])
		}
	}

	byPayload := map[string]*logAppend{}
	told := map[int64]*logAppend{}
	for i := range appends {
		a := &appends[i]
		byPayload[a.payload] = a
		if a.err != nil {
			continue
		}
		if o, dup := told[a.version]; dup {
			report("version %d told to two appends: %q and %q", a.version, o.payload, a.payload)
		}
		told[a.version] = a
	}
	at := map[string][]int64{} // payload → versions holding it
	for v := int64(1); v <= st.latest; v++ {
		data, ok := st.reads[v]
		if !ok {
			continue
		}
		a := byPayload[data]
		if a == nil {
			report("version %d holds %q, which nobody appended", v, data)
			continue
		}
		at[data] = append(at[data], v)
		if c, ok := st.claims[v]; ok && c.Owner != a.owner {
			report("version %d holds %q appended by %s, but its claim names %s", v, data, a.owner, c.Owner)
		}
	}
	for i := range appends {
		a := &appends[i]
		vs := at[a.payload]
		switch {
		case a.err == nil && len(vs) == 0:
			report("acknowledged append of %q (version %d) is missing from the log", a.payload, a.version)
		case a.err == nil && (len(vs) > 1 || vs[0] != a.version):
			report("acknowledged append of %q was told version %d, but the log holds it at %v", a.payload, a.version, vs)
		case len(vs) > 1:
			report("failed append of %q is in the log %d times: versions %v", a.payload, len(vs), vs)
		}
	}
	for _, s := range seen {
		if data, ok := st.reads[s.version]; ok && data != s.data {
			report("version %d read %q while the writers were appending, and %q at the end", s.version, s.data, data)
		}
	}
	return bad
}

// casIncrement is one increment of the object that TestFaultsCommitlog's
// workers grow with Committer.PutIfMatch: the object is a list of lines, and
// an increment appends its id.
type casIncrement struct {
	id     string
	acked  bool   // a PutIfMatch of it was acknowledged
	wrote  string // the content that PutIfMatch wrote
	unsure bool   // a PutIfMatch of it failed with an unknown outcome (not ErrPreconditionFailed, ErrTimeout)
	found  bool   // found in the object, not acknowledged, when re-read before retrying
	gaveUp bool   // neither acknowledged nor found after every attempt
}

// casHeader is the first line of the object.
const casHeader = "increments"

// checkCASCounter checks the increments against the object's final content
// and returns every anomaly found: every acknowledged increment is there
// exactly once and what its PutIfMatch wrote is a prefix of the final
// content (so no acknowledged write was overwritten by one that did not see
// it); no id is there twice; an increment whose every failure was a definite
// refusal is not there.
func checkCASCounter(incs []casIncrement, final string) []string {
	var bad []string
	report := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	lines := strings.Split(strings.TrimSuffix(final, "\n"), "\n")
	if lines[0] != casHeader {
		report("the object does not start with %q: %q", casHeader, final)
		return bad
	}
	count := map[string]int{}
	for _, id := range lines[1:] {
		count[id]++
	}
	known := map[string]bool{}
	for _, inc := range incs {
		known[inc.id] = true
		n := count[inc.id]
		switch {
		case inc.acked && n != 1:
			report("acknowledged increment %s is in the object %d times", inc.id, n)
		case inc.acked && !strings.HasPrefix(final, inc.wrote):
			report("acknowledged increment %s wrote %q, which the final content %q does not extend: a later write did not see it", inc.id, inc.wrote, final)
		case inc.found && n != 1:
			report("increment %s was found applied, but is in the object %d times", inc.id, n)
		case !inc.unsure && !inc.acked && n > 0:
			report("increment %s was refused every time, but is in the object", inc.id)
		case n > 1:
			report("increment %s is in the object %d times", inc.id, n)
		}
	}
	for id, n := range count {
		if !known[id] {
			report("the object holds %q (%d times), which nobody wrote", id, n)
		}
	}
	return bad
}

// TestFaultsCommitlog: five writers, each with its own Log over its own
// faulty DynamoDB and faulty S3 transports (separate seeds), append distinct
// payloads concurrently; a reader over faulty transports too reads the log
// as it grows (completing entries whose writers are still at work); and four
// of the writers' transports also carry Committer.PutIfMatch increments of
// one object. Failed calls are recorded (their outcome is unknown) and
// skipped or retried; then checkLogFaults and checkCASCounter check the
// invariants against what clean clients read.
func TestFaultsCommitlog(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/commitlog.")
	const writers, workers, name = 5, 4, "faults/log"
	perWriter, perWorker := scaled(20), scaled(5)
	endpoint := s3test.Server(t)
	cleanS3 := s3test.Client(t, endpoint)
	bucket := s3test.Bucket(t, cleanS3)
	cleanStore := commitlog.NewS3Store(cleanS3, bucket)
	cleanMapper := dynamo.NewMapper(dynamotest.Client(t))
	logTable := newLogTable(t, cleanStore)
	commitTable := newCommitTable(t, cleanStore)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	var transports []*dynamotest.Faults
	// faulty returns a mapper and a store, each over a new faulty transport.
	faulty := func(salt uint64) (*dynamo.Mapper, commitlog.Store) {
		fd := dynamotest.NewFaults(faultConfig(t, salt, scaled(100)), nil)
		fs := dynamotest.NewFaults(faultConfig(t, salt+1000, scaled(100)), nil)
		t.Cleanup(fs.CloseIdleConnections)
		transports = append(transports, fd, fs)
		// The options of s3test.NewClient, built afresh: s3.New of another
		// client's Options() shares (and writes) its S3 Express credentials
		// cache, a data race once that client is in use.
		client := s3.New(s3.Options{
			Region:                     s3test.Region,
			BaseEndpoint:               aws.String(endpoint),
			UsePathStyle:               true,
			Credentials:                credentials.NewStaticCredentialsProvider("s3test", "s3test", ""),
			RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
			ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
			HTTPClient:                 fs.HTTPClient(),
			Retryer:                    shortRetryer(100 * time.Millisecond),
		})
		return dynamo.NewMapper(fd.Client(t, shortRetries(100*time.Millisecond))), commitlog.NewS3Store(client, bucket)
	}

	seed, err := commitlog.NewCommitter(cleanMapper, commitTable, cleanStore)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seed.PutIfNotExists(ctx, "counter", []byte(casHeader+"\n")); err != nil {
		t.Fatal(err)
	}

	lin := &linRecorder{} // the history for the log model (linear_test.go)
	var mu sync.Mutex
	var appends []logAppend
	var incs []casIncrement
	var wg sync.WaitGroup
	for w := range writers {
		m, s := faulty(uint64(10 + w))
		owner := fmt.Sprintf("w%d", w)
		l, err := commitlog.OpenLog(m, logTable, s, name, commitlog.WithOwner(owner))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				a := logAppend{owner: owner, payload: fmt.Sprintf(`{"writer":%d,"i":%d}`, w, i)}
				call := lin.begin(w, logInput{Name: name, Kind: logAppendOp, Data: a.payload})
				actx, acancel := context.WithTimeout(ctx, 30*time.Second)
				a.version, a.err = l.Append(actx, []byte(a.payload))
				acancel()
				if a.err == nil {
					call.ok(a.version)
				} else {
					call.unknown(a.err)
				}
				mu.Lock()
				appends = append(appends, a)
				mu.Unlock()
			}
		}()
		if w >= workers {
			continue
		}
		c, err := commitlog.NewCommitter(m, commitTable, s, commitlog.WithOwner(owner),
			commitlog.WithTimeout(time.Second), commitlog.WithClockSkewRate(1.5), commitlog.WithPollInterval(20*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				inc := appendIncrement(ctx, c, s, fmt.Sprintf("%s-%d", owner, i))
				mu.Lock()
				incs = append(incs, inc)
				mu.Unlock()
			}
		}()
	}

	// The reader reads each new version as soon as Latest names it (Read
	// completes an entry whose object is not there yet), and now and then
	// an older one again.
	var seen []logSeen
	var readErrs int
	done := make(chan struct{})
	readerDone := make(chan struct{})
	rm, rs := faulty(90)
	reader, err := commitlog.OpenLog(rm, logTable, rs, name, commitlog.WithOwner("reader"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(readerDone)
		next := int64(1)
		read := func(v int64) ([]byte, error) {
			call := lin.begin(writers, logInput{Name: name, Kind: logReadOp, Version: v})
			data, err := reader.Read(ctx, v)
			if err == nil {
				call.ok(string(data))
			}
			return data, err
		}
		for {
			call := lin.begin(writers, logInput{Name: name, Kind: logLatestOp})
			if latest, err := reader.Latest(ctx); err != nil {
				readErrs++
			} else {
				call.ok(latest)
				for ; next <= latest; next++ {
					data, err := read(next)
					if err != nil {
						readErrs++
						break
					}
					seen = append(seen, logSeen{next, string(data)})
				}
			}
			if next > 1 {
				v := 1 + rand.Int64N(next-1)
				if data, err := read(v); err == nil {
					seen = append(seen, logSeen{v, string(data)})
				} else {
					readErrs++
				}
			}
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Millisecond): // polling the log
			}
		}
	}()
	// The reaper deletes Committer records as TTL would, between any two
	// steps of the writers, once their holder's timeout × skew rate has
	// surely passed since they were last written (the writers' records are
	// new incarnations afterwards; issue 11 case 10).
	reaperDone := make(chan struct{})
	var reaped int
	go func() {
		defer close(reaperDone)
		reaped = reapCommitRecords(ctx, t, commitTable, done, 5*time.Second)
	}()
	wg.Wait()
	close(done)
	<-readerDone
	<-reaperDone
	t.Logf("reaper: %d Committer records deleted during the run", reaped)
	stats := stopFaults(transports)

	st := readLogState(ctx, t, cleanMapper, logTable, cleanStore, name)
	// readLogState read Latest, then each version, after every other call
	// had returned: they go into the history in that order.
	lin.begin(writers+1, logInput{Name: name, Kind: logLatestOp}).ok(st.latest)
	for v := int64(1); v <= st.latest; v++ {
		if data, ok := st.reads[v]; ok {
			lin.begin(writers+1, logInput{Name: name, Kind: logReadOp, Version: v}).ok(data)
		}
	}
	anomalies := checkLogFaults(appends, seen, st)
	nonLinear := checkLinear(t, "log", logModel, logPruneAppends, lin.history(), linCap, 30*time.Second).Anomalies()
	counter, _, err := cleanStore.Get(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	anomalies = append(anomalies, checkCASCounter(incs, string(counter))...)
	reportAnomalies(t, anomalies)

	ackedAppends, failedIn, ackedIncs, unsureIncs, foundIncs, gaveUp, logged := 0, 0, 0, 0, 0, 0, 0
	in := map[string]bool{}
	for _, data := range st.reads {
		in[data] = true
	}
	for _, a := range appends {
		switch {
		case a.err == nil:
			ackedAppends++
		case in[a.payload]:
			failedIn++
		}
		if a.err != nil && logged < 3 {
			logged++
			t.Logf("failed append (in the log: %v): %v", in[a.payload], a.err)
		}
	}
	for _, inc := range incs {
		switch {
		case inc.acked:
			ackedIncs++
		case inc.found:
			foundIncs++
		case inc.gaveUp:
			gaveUp++
		}
		if inc.unsure {
			unsureIncs++
		}
	}
	t.Logf("log: %d appends, %d acknowledged, %d failed (%d of those in the log all the same); %d versions; %d reads during the appends (%d failed); %d temporary objects left",
		len(appends), ackedAppends, len(appends)-ackedAppends, failedIn, st.latest, len(seen), readErrs, len(st.temps))
	t.Logf("counter: %d increments, %d acknowledged, %d found applied after a failure, %d given up; %d met an unknown outcome; the object holds %d",
		len(incs), ackedIncs, foundIncs, gaveUp, unsureIncs, strings.Count(string(counter), "\n")-1)
	logFaults(t, faultReport{Ops: len(appends) + len(incs), Acked: ackedAppends + ackedIncs, Anomalies: len(anomalies) + nonLinear, Stats: stats})
}

// reapCommitRecords deletes the records of the Committer table table until
// done is closed, as TTL would, once it was last written more than age ago
// (records carry their TTL in epoch seconds, written as the writer's now +
// 1 h), whether done or not. Each delete is
// conditioned on the generation and done flag it read, so a record taken
// meanwhile is kept. It returns how many it deleted.
func reapCommitRecords(ctx context.Context, t *testing.T, table string, done <-chan struct{}, age time.Duration) int {
	client := dynamotest.Client(t)
	n := 0
	for {
		select {
		case <-done:
			return n
		case <-ctx.Done():
			return n
		case <-time.After(10 * time.Millisecond):
		}
		out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
		if err != nil {
			continue
		}
		for _, item := range out.Items {
			doneAV, _ := item["done"].(*types.AttributeValueMemberBOOL)
			finished := doneAV != nil && doneAV.Value
			var ttl int64
			if v, ok := item["ttl"].(*types.AttributeValueMemberN); ok {
				fmt.Sscan(v.Value, &ttl)
			}
			if time.Since(time.Unix(ttl, 0).Add(-time.Hour)) < age {
				continue
			}
			_, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:           aws.String(table),
				Key:                 map[string]types.AttributeValue{"path": item["path"], "etag": item["etag"]},
				ConditionExpression: aws.String("generation = :g AND done = :d"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":g": item["generation"], ":d": &types.AttributeValueMemberBOOL{Value: finished},
				},
			})
			if err == nil {
				n++
			}
		}
	}
}

// appendIncrement appends id to the object "counter" with Committer.PutIfMatch,
// re-reading it after every failure; after a failure of unknown outcome, a
// re-read that finds id there ends it.
func appendIncrement(ctx context.Context, c *commitlog.Committer, s commitlog.Store, id string) casIncrement {
	inc := casIncrement{id: id}
	for range 30 {
		if ctx.Err() != nil {
			break
		}
		data, info, err := s.Get(ctx, "counter")
		if err != nil {
			continue
		}
		if strings.Contains("\n"+string(data), "\n"+id+"\n") {
			inc.found = true
			return inc
		}
		next := string(data) + id + "\n"
		pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
		_, err = c.PutIfMatch(pctx, "counter", []byte(next), info.ETag)
		pcancel()
		switch {
		case err == nil:
			inc.acked, inc.wrote = true, next
			return inc
		case errors.Is(err, commitlog.ErrPreconditionFailed), errors.Is(err, commitlog.ErrTimeout):
			// Refused: nothing written.
		default:
			inc.unsure = true
		}
	}
	inc.gaveUp = true
	return inc
}

// readLogState reads the log name through clean clients: Read of every
// version (which completes entries left incomplete), Entries, the claims, and
// the objects under the log's prefix.
func readLogState(ctx context.Context, t *testing.T, m *dynamo.Mapper, table string, s commitlog.Store, name string) logState {
	t.Helper()
	l, err := commitlog.OpenLog(m, table, s, name, commitlog.WithOwner("checker"))
	if err != nil {
		t.Fatal(err)
	}
	st := logState{claims: map[int64]claimRecord{}, reads: map[int64]string{}, readErrs: map[int64]error{},
		objects: map[int64]string{}, temps: map[string]string{}, paths: l.Path}
	if st.latest, err = l.Latest(ctx); err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= st.latest; v++ {
		if data, err := l.Read(ctx, v); err != nil {
			st.readErrs[v] = err
		} else {
			st.reads[v] = string(data)
		}
	}
	for e, err := range l.Entries(ctx, 1) {
		if err != nil {
			st.entryErr = err
			break
		}
		st.entries = append(st.entries, e)
	}
	claims, err := dynamo.NewTable[claimRecord](m, table)
	if err != nil {
		t.Fatal(err)
	}
	for c, err := range claims.Query(ctx, expression.Key("log").Equal(expression.Value(name)), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		st.claims[c.Version] = c
	}
	for info, err := range s.List(ctx, name+"/") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := s.Get(ctx, info.Path)
		if err != nil {
			t.Fatal(err)
		}
		var v int64
		switch {
		case strings.HasPrefix(info.Path, name+"/_tmp/"):
			st.temps[info.Path] = string(data)
		case logObjectVersion(info.Path, name, &v) && info.Path == l.Path(v):
			st.objects[v] = string(data)
		default:
			st.strangers = append(st.strangers, info.Path)
		}
	}
	return st
}

func logObjectVersion(path, name string, v *int64) bool {
	_, err := fmt.Sscanf(strings.TrimPrefix(path, name+"/"), "%d.json", v)
	return err == nil && strings.HasPrefix(path, name+"/")
}

// TestFaultsCommitlogChecker: checkLogFaults and checkCASCounter find each
// kind of anomaly in a doctored record, and none in a good one.
func TestFaultsCommitlogChecker(t *testing.T) {
	path := func(v int64) string { return fmt.Sprintf("l/%020d.json", v) }
	good := func() ([]logAppend, []logSeen, logState) {
		appends := []logAppend{
			{owner: "w0", payload: "a", version: 1},
			{owner: "w1", payload: "b", version: 2},
			{owner: "w0", payload: "c", err: errors.New("reset")}, // failed, in the log
			{owner: "w1", payload: "d", err: errors.New("reset")}, // failed, not in the log
			{owner: "w1", payload: "e", version: 4},
		}
		st := logState{latest: 4, paths: path,
			claims: map[int64]claimRecord{1: {Version: 1, Owner: "w0", Temp: "t1"}, 2: {Version: 2, Owner: "w1", Temp: "t2"},
				3: {Version: 3, Owner: "w0", Temp: "t3"}, 4: {Version: 4, Owner: "w1", Temp: "t4"}},
			reads:    map[int64]string{1: "a", 2: "b", 3: "c", 4: "e"},
			readErrs: map[int64]error{},
			objects:  map[int64]string{1: "a", 2: "b", 3: "c", 4: "e"},
			entries:  []commitlog.Entry{{Version: 1, Data: []byte("a")}, {Version: 2, Data: []byte("b")}, {Version: 3, Data: []byte("c")}, {Version: 4, Data: []byte("e")}},
		}
		return appends, []logSeen{{1, "a"}, {4, "e"}}, st
	}
	if a, s, st := good(); len(checkLogFaults(a, s, st)) != 0 {
		t.Fatalf("good log: %q", checkLogFaults(a, s, st))
	}
	setVersion := func(st *logState, v int64, data string) {
		st.reads[v], st.objects[v] = data, data
		st.entries[v-1].Data = []byte(data)
	}
	cases := map[string]func([]logAppend, []logSeen, *logState) ([]logAppend, []logSeen){
		"payload at two versions": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			setVersion(st, 3, "b")
			st.claims[3] = claimRecord{Version: 3, Owner: "w1", Temp: "t2"}
			return a, s
		},
		"two claims of one temporary object": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			st.claims[4] = claimRecord{Version: 4, Owner: "w1", Temp: "t1"}
			return a, s
		},
		"failed payload at two versions": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			setVersion(st, 4, "c")
			st.claims[4] = claimRecord{Version: 4, Owner: "w0"}
			a[4].err, a[4].version = errors.New("reset"), 0
			return a, s
		},
		"acknowledged append missing": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			a[3].err, a[3].version = nil, 5
			return a, s
		},
		"acknowledged at another version": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			a[4].version = 3
			return a, s
		},
		"version told twice": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			a[2].err, a[2].version = nil, 2
			return a, s
		},
		"gap": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			delete(st.claims, 3)
			return a, s
		},
		"unreadable version": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			delete(st.reads, 3)
			st.readErrs[3] = errors.New("cannot be completed")
			return a, s
		},
		"object differs from read": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			st.objects[2] = "x"
			return a, s
		},
		"version overwritten": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			return a, append(s, logSeen{2, "d"})
		},
		"claim names another writer": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			st.claims[1] = claimRecord{Version: 1, Owner: "w1"}
			return a, s
		},
		"payload nobody appended": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			setVersion(st, 3, "zzz")
			return a, s
		},
		"stranger object": func(a []logAppend, s []logSeen, st *logState) ([]logAppend, []logSeen) {
			st.strangers = append(st.strangers, "l/x")
			return a, s
		},
	}
	for name, doctor := range cases {
		a, s, st := good()
		a, s = doctor(a, s, &st)
		if got := checkLogFaults(a, s, st); len(got) == 0 {
			t.Errorf("log, %s: no anomaly found", name)
		} else {
			t.Logf("log, %s: %q", name, got)
		}
	}

	incs := []casIncrement{
		{id: "w0-0", acked: true, wrote: "increments\nw0-0\n"},
		{id: "w1-0", unsure: true, found: true},
		{id: "w1-1", acked: true, wrote: "increments\nw0-0\nw1-0\nw1-1\n"},
		{id: "w0-1", unsure: true, gaveUp: true},
	}
	final := "increments\nw0-0\nw1-0\nw1-1\n"
	if got := checkCASCounter(incs, final); len(got) != 0 {
		t.Fatalf("good counter: %q", got)
	}
	for name, final := range map[string]string{
		"acknowledged increment missing": "increments\nw0-0\nw1-0\n",
		"increment twice":                "increments\nw0-0\nw1-0\nw1-1\nw1-1\n",
		"acknowledged write overwritten": "increments\nw1-0\nw0-0\nw1-1\n",
		"increment nobody wrote":         "increments\nw0-0\nw1-0\nw1-1\nw0-1\nw9-9\n",
		"lost header":                    "w0-0\nw1-0\nw1-1\n",
	} {
		if got := checkCASCounter(incs, final); len(got) == 0 {
			t.Errorf("counter, %s: no anomaly found", name)
		} else {
			t.Logf("counter, %s: %q", name, got)
		}
	}
	refused := append(incs[:len(incs):len(incs)], casIncrement{id: "w2-0", gaveUp: true})
	if got := checkCASCounter(refused, final+"w2-0\n"); len(got) == 0 {
		t.Errorf("counter, refused every time but applied: no anomaly found")
	}
}
