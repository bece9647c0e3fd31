// Bench drives Java's DynamoDBMapper (AWS SDK for Java v1) and the v2
// Enhanced Client (VersionedRecordExtension) for the peers benchmark on
// DynamoDB Local (benchmarks/peers/local, scripts/bench-peers-local.sh),
// compiled against the jars DynamoDB Local ships (DynamoDBLocal_lib/*).
// It reads one command per line on stdin and answers one line on stdout:
//
//   java Bench <endpoint> <region> <access key> <secret key> <table>
//
//   run <v1|v2> seq <id> <seconds>
//       one thread saves the item <id> again and again for <seconds>, holding
//       its version, each save incrementing n: a sequential versioned save loop.
//   run <v1|v2> contended <id> <seconds> <threads>
//       <threads> threads increment n of the one item <id> for <seconds>, each
//       by read-modify-write (consistent load, n+1, versioned save), reading
//       again after a conflict (ConditionalCheckFailedException).
//   quit
//
// Answer: "ok <successful saves> <conflicts> <elapsed nanoseconds> <CPU
// nanoseconds>" (the CPU time of the whole JVM during the run: every thread,
// JIT compiler and garbage collector included), or "error <message>". The table has the hash key id (S); the item is
// {id, n, payload, v} with v the version attribute, as on the Go side.

import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDB;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDBClientBuilder;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBAttribute;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBHashKey;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBMapper;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBMapperConfig;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBTable;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBVersionAttribute;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbEnhancedClient;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbTable;
import software.amazon.awssdk.enhanced.dynamodb.Key;
import software.amazon.awssdk.enhanced.dynamodb.TableSchema;
import software.amazon.awssdk.enhanced.dynamodb.extensions.annotations.DynamoDbVersionAttribute;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbAttribute;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbBean;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbPartitionKey;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

public class Bench {
  static final String PAYLOAD = "some payload";

  @DynamoDBTable(tableName = "replaced-by-the-mapper-config")
  public static class V1Counter {
    private String id;
    private Long n;
    private String payload;
    private Long v;

    @DynamoDBHashKey(attributeName = "id") public String getId() { return id; }
    public void setId(String x) { id = x; }
    @DynamoDBAttribute(attributeName = "n") public Long getN() { return n; }
    public void setN(Long x) { n = x; }
    @DynamoDBAttribute(attributeName = "payload") public String getPayload() { return payload; }
    public void setPayload(String x) { payload = x; }
    @DynamoDBVersionAttribute(attributeName = "v") public Long getV() { return v; }
    public void setV(Long x) { v = x; }
  }

  @DynamoDbBean
  public static class V2Counter {
    private String id;
    private Long n;
    private String payload;
    private Long v;

    @DynamoDbPartitionKey @DynamoDbAttribute("id") public String getId() { return id; }
    public void setId(String x) { id = x; }
    @DynamoDbAttribute("n") public Long getN() { return n; }
    public void setN(Long x) { n = x; }
    @DynamoDbAttribute("payload") public String getPayload() { return payload; }
    public void setPayload(String x) { payload = x; }
    @DynamoDbVersionAttribute @DynamoDbAttribute("v") public Long getV() { return v; }
    public void setV(Long x) { v = x; }
  }

  static boolean isConflict(Throwable e) {
    return e instanceof com.amazonaws.services.dynamodbv2.model.ConditionalCheckFailedException
        || e instanceof software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
  }

  static DynamoDBMapper mapper;
  static DynamoDbTable<V2Counter> v2Table;

  // ---- DynamoDBMapper (v1) ----------------------------------------------------

  static V1Counter v1New(String id) {
    V1Counter c = new V1Counter();
    c.setId(id);
    c.setN(0L);
    c.setPayload(PAYLOAD);
    return c; // v null: the first save expects no item
  }

  // v1Seq: DynamoDBMapper.save sets the saved version on the object, so the
  // loop holds the item as users do.
  static long[] v1Seq(String id, long deadline) {
    V1Counter c = v1New(id);
    long ops = 0;
    while (System.nanoTime() < deadline) {
      c.setN(c.getN() + 1);
      mapper.save(c);
      ops++;
    }
    return new long[] {ops, 0};
  }

  static boolean v1Increment(String id) {
    V1Counter c = mapper.load(V1Counter.class, id);
    if (c == null) {
      c = v1New(id);
    }
    c.setN(c.getN() + 1);
    try {
      mapper.save(c);
      return true;
    } catch (RuntimeException e) {
      if (isConflict(e)) {
        return false;
      }
      throw e;
    }
  }

  // ---- Enhanced Client (v2) ---------------------------------------------------

  static V2Counter v2New(String id) {
    V2Counter c = new V2Counter();
    c.setId(id);
    c.setN(0L);
    c.setPayload(PAYLOAD);
    return c;
  }

  // v2Seq: putItem does not change the object's version; the caller steps it,
  // as the extension wrote held+1.
  static long[] v2Seq(String id, long deadline) {
    V2Counter c = v2New(id);
    long ops = 0;
    while (System.nanoTime() < deadline) {
      c.setN(c.getN() + 1);
      v2Table.putItem(c);
      c.setV(c.getV() == null ? 1L : c.getV() + 1);
      ops++;
    }
    return new long[] {ops, 0};
  }

  static boolean v2Increment(String id) {
    Key key = Key.builder().partitionValue(id).build();
    V2Counter c = v2Table.getItem(r -> r.key(key).consistentRead(true));
    if (c == null) {
      c = v2New(id);
    }
    c.setN(c.getN() + 1);
    try {
      v2Table.putItem(c);
      return true;
    } catch (RuntimeException e) {
      if (isConflict(e)) {
        return false;
      }
      throw e;
    }
  }

  static long[] contended(String impl, String id, long deadline, int threads) throws Exception {
    AtomicLong ok = new AtomicLong(), conflicts = new AtomicLong();
    List<Throwable> errors = new ArrayList<>();
    List<Thread> ts = new ArrayList<>();
    for (int k = 0; k < threads; k++) {
      Thread t = new Thread(() -> {
        try {
          while (System.nanoTime() < deadline) {
            boolean done = impl.equals("v1") ? v1Increment(id) : v2Increment(id);
            (done ? ok : conflicts).incrementAndGet();
          }
        } catch (Throwable e) {
          synchronized (errors) {
            errors.add(e);
          }
        }
      });
      ts.add(t);
      t.start();
    }
    for (Thread t : ts) {
      t.join();
    }
    if (!errors.isEmpty()) {
      throw new RuntimeException(errors.get(0));
    }
    return new long[] {ok.get(), conflicts.get()};
  }

  static String run(String[] w) throws Exception {
    if (w.length < 5 || !w[0].equals("run") || !(w[1].equals("v1") || w[1].equals("v2"))) {
      return "error usage: run <v1|v2> <seq|contended> <id> <seconds> [threads]";
    }
    String impl = w[1], measure = w[2], id = w[3];
    long cpu0 = processCpu();
    long start = System.nanoTime();
    long deadline = start + (long) (Double.parseDouble(w[4]) * 1e9);
    long[] r;
    switch (measure) {
      case "seq":
        r = impl.equals("v1") ? v1Seq(id, deadline) : v2Seq(id, deadline);
        break;
      case "contended":
        r = contended(impl, id, deadline, Integer.parseInt(w[5]));
        break;
      default:
        return "error unknown measure " + measure;
    }
    long elapsed = System.nanoTime() - start;
    return "ok " + r[0] + " " + r[1] + " " + elapsed + " " + (processCpu() - cpu0);
  }

  static long processCpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (args.length != 5) {
      out.println("error usage: Bench <endpoint> <region> <access key> <secret key> <table>");
      System.exit(2);
    }
    String endpoint = args[0], region = args[1], key = args[2], secret = args[3], table = args[4];

    AmazonDynamoDB v1Client = AmazonDynamoDBClientBuilder.standard()
        .withEndpointConfiguration(new AwsClientBuilder.EndpointConfiguration(endpoint, region))
        .withCredentials(new AWSStaticCredentialsProvider(new BasicAWSCredentials(key, secret)))
        .build();
    mapper = new DynamoDBMapper(v1Client, DynamoDBMapperConfig.builder()
        .withTableNameOverride(DynamoDBMapperConfig.TableNameOverride.withTableNameReplacement(table))
        .withConsistentReads(DynamoDBMapperConfig.ConsistentReads.CONSISTENT)
        .build());

    DynamoDbClient v2Client = DynamoDbClient.builder()
        .endpointOverride(URI.create(endpoint))
        .region(Region.of(region))
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(key, secret)))
        .httpClient(ApacheHttpClient.builder().maxConnections(64).build())
        .build();
    DynamoDbEnhancedClient enhanced = DynamoDbEnhancedClient.builder().dynamoDbClient(v2Client).build();
    v2Table = enhanced.table(table, TableSchema.fromBean(V2Counter.class));

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println("ready");
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ");
      if (w[0].equals("quit")) {
        break;
      }
      try {
        out.println(run(w));
      } catch (Throwable e) {
        out.println(("error " + e).replace('\n', ' '));
      }
    }
    v1Client.shutdown();
    v2Client.close();
  }
}
