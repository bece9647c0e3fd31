// Interop drives Java's DynamoDBMapper (AWS SDK for Java v1) and the v2
// Enhanced Client for integration/java_test.go, which compiles it against the
// jars DynamoDB Local ships (DynamoDBLocal_lib/*) and talks to it over
// stdin/stdout: one command per line in, one answer per line out.
//
//   java Interop <endpoint> <region> <access key> <secret key> <v1 table> <v2 table> <uuid table>
//
// Commands (held = the version the caller holds, 0 = unsaved):
//   v1.write <id>              save the v1 fixture as a new item        -> ok <version>
//   v1.check <id>              load and compare with the v1 fixture     -> ok <version> | fail <differences>
//   v1.resave <id>             load, then save what was loaded          -> ok <version> | conflict
//   v1.save <id> <held> <note> save the fixture holding version held    -> ok <version> | conflict
//   v1.delete <id> <held>      delete holding version held              -> ok | conflict
//   v1.load <id>               load                                     -> ok <version> <note> | missing
//   v2.<same>                  the same with the v2 Enhanced Client (v2.delete is not offered:
//                              the Enhanced Client deletes without checking the version)
//   u1.save <id> <held> <ref>  save a U1Item (UUID hash key) holding version held, ref a UUID
//                                                                       -> ok <version> | conflict
//   u1.load <id>               load a U1Item                            -> ok <version> <ref> | missing
//   u2.<same>                  the same with the Enhanced Client (U2Item)
//   quit
// Any other failure answers "error <message>". Nothing but answers is printed
// on stdout; the SDKs log to stderr.
//
// The fixtures below must match javaV1Fixture and javaV2Fixture in
// java_test.go field for field.

import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDB;
import com.amazonaws.services.dynamodbv2.AmazonDynamoDBClientBuilder;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBAttribute;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBDocument;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBHashKey;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBIgnore;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBMapper;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBMapperConfig;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBRangeKey;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBTable;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBTypeConvertedEnum;
import com.amazonaws.services.dynamodbv2.datamodeling.DynamoDBVersionAttribute;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TimeZone;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbEnhancedClient;
import software.amazon.awssdk.enhanced.dynamodb.DynamoDbTable;
import software.amazon.awssdk.enhanced.dynamodb.Key;
import software.amazon.awssdk.enhanced.dynamodb.TableSchema;
import software.amazon.awssdk.enhanced.dynamodb.extensions.annotations.DynamoDbVersionAttribute;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbAttribute;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbBean;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbIgnore;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbPartitionKey;
import software.amazon.awssdk.enhanced.dynamodb.mapper.annotations.DynamoDbSortKey;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

public class Interop {
  static final long SEQ = 7;
  // The UUIDs of the fixtures (javaUID and javaUIDs in java_test.go).
  static final String UID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
  static final String[] UIDS = {"00000000-0000-0000-0000-000000000000", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"};

  // ---- DynamoDBMapper (SDK v1) ------------------------------------------------

  public enum Color { RED, GREEN }

  @DynamoDBDocument
  public static class V1Doc {
    private String name;
    private Boolean flag;
    private Date when;
    private List<Boolean> flags;
    private Set<String> tags;
    private Map<String, String> attrs;

    @DynamoDBAttribute(attributeName = "name") public String getName() { return name; }
    public void setName(String v) { name = v; }
    @DynamoDBAttribute(attributeName = "flag") public Boolean getFlag() { return flag; }
    public void setFlag(Boolean v) { flag = v; }
    @DynamoDBAttribute(attributeName = "when") public Date getWhen() { return when; }
    public void setWhen(Date v) { when = v; }
    @DynamoDBAttribute(attributeName = "flags") public List<Boolean> getFlags() { return flags; }
    public void setFlags(List<Boolean> v) { flags = v; }
    @DynamoDBAttribute(attributeName = "tags") public Set<String> getTags() { return tags; }
    public void setTags(Set<String> v) { tags = v; }
    @DynamoDBAttribute(attributeName = "attrs") public Map<String, String> getAttrs() { return attrs; }
    public void setAttrs(Map<String, String> v) { attrs = v; }
  }

  @DynamoDBTable(tableName = "replaced-by-the-mapper-config")
  public static class V1Item {
    private String id;
    private Long seq;
    private Long version;
    private String str;
    private int i;
    private Long l;
    private Short sh;
    private Byte by;
    private Float f;
    private Double d;
    private BigDecimal bd;
    private BigInteger bi;
    private Boolean b;
    private boolean pb;
    private Date date;
    private Calendar cal;
    private Set<String> ss;
    private Set<Integer> ns;
    private Set<ByteBuffer> bs;
    private byte[] bin;
    private List<String> list;
    private List<Boolean> lb;
    private Map<String, Integer> map;
    private V1Doc doc;
    private List<V1Doc> docs;
    private Color color;
    private String javaName;
    private String note;
    private String absent;
    private String ignored;
    private Date nodate;
    private Map<String, Long> longs;
    private UUID uid;
    private Set<UUID> uids;

    @DynamoDBHashKey(attributeName = "id") public String getId() { return id; }
    public void setId(String v) { id = v; }
    @DynamoDBRangeKey(attributeName = "seq") public Long getSeq() { return seq; }
    public void setSeq(Long v) { seq = v; }
    @DynamoDBVersionAttribute(attributeName = "version") public Long getVersion() { return version; }
    public void setVersion(Long v) { version = v; }
    @DynamoDBAttribute(attributeName = "str") public String getStr() { return str; }
    public void setStr(String v) { str = v; }
    @DynamoDBAttribute(attributeName = "i") public int getI() { return i; }
    public void setI(int v) { i = v; }
    @DynamoDBAttribute(attributeName = "l") public Long getL() { return l; }
    public void setL(Long v) { l = v; }
    @DynamoDBAttribute(attributeName = "sh") public Short getSh() { return sh; }
    public void setSh(Short v) { sh = v; }
    @DynamoDBAttribute(attributeName = "by") public Byte getBy() { return by; }
    public void setBy(Byte v) { by = v; }
    @DynamoDBAttribute(attributeName = "f") public Float getF() { return f; }
    public void setF(Float v) { f = v; }
    @DynamoDBAttribute(attributeName = "d") public Double getD() { return d; }
    public void setD(Double v) { d = v; }
    @DynamoDBAttribute(attributeName = "bd") public BigDecimal getBd() { return bd; }
    public void setBd(BigDecimal v) { bd = v; }
    @DynamoDBAttribute(attributeName = "bi") public BigInteger getBi() { return bi; }
    public void setBi(BigInteger v) { bi = v; }
    @DynamoDBAttribute(attributeName = "b") public Boolean getB() { return b; }
    public void setB(Boolean v) { b = v; }
    @DynamoDBAttribute(attributeName = "pb") public boolean isPb() { return pb; }
    public void setPb(boolean v) { pb = v; }
    @DynamoDBAttribute(attributeName = "date") public Date getDate() { return date; }
    public void setDate(Date v) { date = v; }
    @DynamoDBAttribute(attributeName = "cal") public Calendar getCal() { return cal; }
    public void setCal(Calendar v) { cal = v; }
    @DynamoDBAttribute(attributeName = "ss") public Set<String> getSs() { return ss; }
    public void setSs(Set<String> v) { ss = v; }
    @DynamoDBAttribute(attributeName = "ns") public Set<Integer> getNs() { return ns; }
    public void setNs(Set<Integer> v) { ns = v; }
    @DynamoDBAttribute(attributeName = "bs") public Set<ByteBuffer> getBs() { return bs; }
    public void setBs(Set<ByteBuffer> v) { bs = v; }
    @DynamoDBAttribute(attributeName = "bin") public byte[] getBin() { return bin; }
    public void setBin(byte[] v) { bin = v; }
    @DynamoDBAttribute(attributeName = "list") public List<String> getList() { return list; }
    public void setList(List<String> v) { list = v; }
    @DynamoDBAttribute(attributeName = "lb") public List<Boolean> getLb() { return lb; }
    public void setLb(List<Boolean> v) { lb = v; }
    @DynamoDBAttribute(attributeName = "map") public Map<String, Integer> getMap() { return map; }
    public void setMap(Map<String, Integer> v) { map = v; }
    @DynamoDBAttribute(attributeName = "doc") public V1Doc getDoc() { return doc; }
    public void setDoc(V1Doc v) { doc = v; }
    @DynamoDBAttribute(attributeName = "docs") public List<V1Doc> getDocs() { return docs; }
    public void setDocs(List<V1Doc> v) { docs = v; }
    @DynamoDBTypeConvertedEnum @DynamoDBAttribute(attributeName = "color") public Color getColor() { return color; }
    public void setColor(Color v) { color = v; }
    @DynamoDBAttribute(attributeName = "renamed") public String getJavaName() { return javaName; }
    public void setJavaName(String v) { javaName = v; }
    @DynamoDBAttribute(attributeName = "note") public String getNote() { return note; }
    public void setNote(String v) { note = v; }
    @DynamoDBAttribute(attributeName = "absent") public String getAbsent() { return absent; }
    public void setAbsent(String v) { absent = v; }
    @DynamoDBIgnore public String getIgnored() { return ignored; }
    public void setIgnored(String v) { ignored = v; }
    @DynamoDBAttribute(attributeName = "nodate") public Date getNodate() { return nodate; }
    public void setNodate(Date v) { nodate = v; }
    @DynamoDBAttribute(attributeName = "longs") public Map<String, Long> getLongs() { return longs; }
    public void setLongs(Map<String, Long> v) { longs = v; }
    // DynamoDBMapper converts UUID natively: S holding UUID.toString(), a Set<UUID> as SS.
    @DynamoDBAttribute(attributeName = "uid") public UUID getUid() { return uid; }
    public void setUid(UUID v) { uid = v; }
    @DynamoDBAttribute(attributeName = "uids") public Set<UUID> getUids() { return uids; }
    public void setUids(Set<UUID> v) { uids = v; }
  }

  // U1Item has a UUID hash key (an S key in DynamoDB).
  @DynamoDBTable(tableName = "replaced-by-the-mapper-config")
  public static class U1Item {
    private UUID id;
    private Long version;
    private UUID ref;
    private String note;

    @DynamoDBHashKey(attributeName = "id") public UUID getId() { return id; }
    public void setId(UUID v) { id = v; }
    @DynamoDBVersionAttribute(attributeName = "version") public Long getVersion() { return version; }
    public void setVersion(Long v) { version = v; }
    @DynamoDBAttribute(attributeName = "ref") public UUID getRef() { return ref; }
    public void setRef(UUID v) { ref = v; }
    @DynamoDBAttribute(attributeName = "note") public String getNote() { return note; }
    public void setNote(String v) { note = v; }
  }

  static V1Doc v1Doc(String name, boolean flag, long when, List<Boolean> flags, Set<String> tags, Map<String, String> attrs) {
    V1Doc d = new V1Doc();
    d.setName(name);
    d.setFlag(flag);
    d.setWhen(new Date(when));
    d.setFlags(flags);
    d.setTags(tags);
    d.setAttrs(attrs);
    return d;
  }

  static V1Item v1Fixture(String id) {
    V1Item it = new V1Item();
    it.setId(id);
    it.setSeq(SEQ);
    it.setStr("héllo, wörld ✓ \"quoted\"");
    it.setI(2147483647);
    it.setL(9007199254740993L); // 2^53+1: not a float64
    it.setSh((short) -32768);
    it.setBy((byte) -128);
    it.setF(1.5f);
    it.setD(-273.15);
    it.setBd(new BigDecimal("-3.14159265358979323846264338327950288"));
    it.setBi(new BigInteger("123456789012345678901234567890"));
    it.setB(true);
    it.setPb(false);
    it.setDate(new Date(1700000000120L)); // 2023-11-14T22:13:20.120Z: Go alone would write .12Z
    Calendar cal = Calendar.getInstance(TimeZone.getTimeZone("Europe/Paris"));
    cal.setTimeInMillis(1700000000456L); // stored in UTC
    it.setCal(cal);
    it.setSs(new LinkedHashSet<>(Arrays.asList("a", "b")));
    it.setNs(new LinkedHashSet<>(Arrays.asList(1, 2, 3)));
    it.setBs(new LinkedHashSet<>(Arrays.asList(ByteBuffer.wrap(new byte[] {1}), ByteBuffer.wrap(new byte[] {2, 3}))));
    it.setBin(new byte[] {0, 1, 2, (byte) 255});
    it.setList(Arrays.asList("x", "y"));
    it.setLb(Arrays.asList(true, false, true));
    Map<String, Integer> m = new LinkedHashMap<>();
    m.put("one", 1);
    m.put("two", 2);
    it.setMap(m);
    V1Doc inner = v1Doc("inner", true, 1600000000000L, Arrays.asList(false, true),
        new LinkedHashSet<>(Arrays.asList("t1", "t2")), Map.of("k", "v"));
    it.setDoc(inner);
    it.setDocs(Arrays.asList(inner, v1Doc("second", false, 1500000000999L, Arrays.asList(true),
        new LinkedHashSet<>(Arrays.asList("t3")), Map.of("k2", "v2"))));
    it.setColor(Color.RED);
    it.setJavaName("renamed in Java");
    it.setNote("fixture");
    it.setIgnored("never stored");
    // nodate stays null: Go must not turn it into year 1.
    Map<String, Long> longs = new LinkedHashMap<>();
    longs.put("max", Long.MAX_VALUE); // Go's map[string]any must not round it through float64
    longs.put("min", Long.MIN_VALUE);
    it.setLongs(longs);
    it.setUid(UUID.fromString(UID));
    it.setUids(new LinkedHashSet<>(Arrays.asList(UUID.fromString(UIDS[0]), UUID.fromString(UIDS[1]))));
    return it;
  }

  static void compareV1Doc(List<String> diffs, String path, V1Doc got, V1Doc want) {
    if (got == null) {
      diffs.add(path + ": missing");
      return;
    }
    eq(diffs, path + ".name", got.getName(), want.getName());
    eq(diffs, path + ".flag", got.getFlag(), want.getFlag());
    eq(diffs, path + ".when", got.getWhen(), want.getWhen());
    eq(diffs, path + ".flags", got.getFlags(), want.getFlags());
    eq(diffs, path + ".tags", got.getTags(), want.getTags());
    eq(diffs, path + ".attrs", got.getAttrs(), want.getAttrs());
  }

  static List<String> compareV1(V1Item got, V1Item want) {
    List<String> diffs = new ArrayList<>();
    eq(diffs, "id", got.getId(), want.getId());
    eq(diffs, "seq", got.getSeq(), want.getSeq());
    eq(diffs, "str", got.getStr(), want.getStr());
    eq(diffs, "i", got.getI(), want.getI());
    eq(diffs, "l", got.getL(), want.getL());
    eq(diffs, "sh", got.getSh(), want.getSh());
    eq(diffs, "by", got.getBy(), want.getBy());
    eq(diffs, "f", got.getF(), want.getF());
    eq(diffs, "d", got.getD(), want.getD());
    numEq(diffs, "bd", got.getBd(), want.getBd());
    eq(diffs, "bi", got.getBi(), want.getBi());
    eq(diffs, "b", got.getB(), want.getB());
    eq(diffs, "pb", got.isPb(), want.isPb());
    eq(diffs, "date", got.getDate(), want.getDate());
    eq(diffs, "cal", got.getCal() == null ? null : got.getCal().getTimeInMillis(), want.getCal().getTimeInMillis());
    eq(diffs, "ss", got.getSs(), want.getSs());
    eq(diffs, "ns", got.getNs(), want.getNs());
    eq(diffs, "bs", got.getBs(), want.getBs());
    eq(diffs, "bin", got.getBin(), want.getBin());
    eq(diffs, "list", got.getList(), want.getList());
    eq(diffs, "lb", got.getLb(), want.getLb());
    eq(diffs, "map", got.getMap(), want.getMap());
    compareV1Doc(diffs, "doc", got.getDoc(), want.getDoc());
    if (got.getDocs() == null || got.getDocs().size() != want.getDocs().size()) {
      diffs.add("docs: got " + show(got.getDocs()) + ", want " + want.getDocs().size() + " documents");
    } else {
      for (int k = 0; k < want.getDocs().size(); k++) {
        compareV1Doc(diffs, "docs[" + k + "]", got.getDocs().get(k), want.getDocs().get(k));
      }
    }
    eq(diffs, "color", got.getColor(), want.getColor());
    eq(diffs, "renamed", got.getJavaName(), want.getJavaName());
    eq(diffs, "note", got.getNote(), want.getNote());
    eq(diffs, "absent", got.getAbsent(), null);
    eq(diffs, "nodate", got.getNodate(), null);
    eq(diffs, "longs", got.getLongs(), want.getLongs());
    eq(diffs, "ignored", got.getIgnored(), null);
    eq(diffs, "uid", got.getUid(), want.getUid());
    eq(diffs, "uids", got.getUids(), want.getUids());
    return diffs;
  }

  // ---- Enhanced Client (SDK v2) -----------------------------------------------

  @DynamoDbBean
  public static class V2Doc {
    private String name;
    private Boolean flag;
    private Instant at;
    private List<String> tags;

    @DynamoDbAttribute("name") public String getName() { return name; }
    public void setName(String v) { name = v; }
    @DynamoDbAttribute("flag") public Boolean getFlag() { return flag; }
    public void setFlag(Boolean v) { flag = v; }
    @DynamoDbAttribute("at") public Instant getAt() { return at; }
    public void setAt(Instant v) { at = v; }
    @DynamoDbAttribute("tags") public List<String> getTags() { return tags; }
    public void setTags(List<String> v) { tags = v; }
  }

  @DynamoDbBean
  public static class V2Item {
    private String id;
    private Long seq;
    private Long version;
    private String str;
    private Integer i;
    private Long l;
    private Double d;
    private Float f;
    private BigDecimal bd;
    private Boolean b;
    private Instant at;
    private Instant atMillis;
    private Set<String> ss;
    private Set<Long> ns;
    private Set<SdkBytes> bs;
    private SdkBytes bin;
    private List<String> list;
    private List<Boolean> lb;
    private Map<String, Long> map;
    private V2Doc doc;
    private List<V2Doc> docs;
    private String note;
    private String absent;
    private String ignored;
    private UUID uid;
    private Set<UUID> uids;

    @DynamoDbPartitionKey @DynamoDbAttribute("id") public String getId() { return id; }
    public void setId(String v) { id = v; }
    @DynamoDbSortKey @DynamoDbAttribute("seq") public Long getSeq() { return seq; }
    public void setSeq(Long v) { seq = v; }
    @DynamoDbVersionAttribute @DynamoDbAttribute("version") public Long getVersion() { return version; }
    public void setVersion(Long v) { version = v; }
    @DynamoDbAttribute("str") public String getStr() { return str; }
    public void setStr(String v) { str = v; }
    @DynamoDbAttribute("i") public Integer getI() { return i; }
    public void setI(Integer v) { i = v; }
    @DynamoDbAttribute("l") public Long getL() { return l; }
    public void setL(Long v) { l = v; }
    @DynamoDbAttribute("d") public Double getD() { return d; }
    public void setD(Double v) { d = v; }
    @DynamoDbAttribute("f") public Float getF() { return f; }
    public void setF(Float v) { f = v; }
    @DynamoDbAttribute("bd") public BigDecimal getBd() { return bd; }
    public void setBd(BigDecimal v) { bd = v; }
    @DynamoDbAttribute("b") public Boolean getB() { return b; }
    public void setB(Boolean v) { b = v; }
    @DynamoDbAttribute("at") public Instant getAt() { return at; }
    public void setAt(Instant v) { at = v; }
    @DynamoDbAttribute("atMillis") public Instant getAtMillis() { return atMillis; }
    public void setAtMillis(Instant v) { atMillis = v; }
    @DynamoDbAttribute("ss") public Set<String> getSs() { return ss; }
    public void setSs(Set<String> v) { ss = v; }
    @DynamoDbAttribute("ns") public Set<Long> getNs() { return ns; }
    public void setNs(Set<Long> v) { ns = v; }
    @DynamoDbAttribute("bs") public Set<SdkBytes> getBs() { return bs; }
    public void setBs(Set<SdkBytes> v) { bs = v; }
    @DynamoDbAttribute("bin") public SdkBytes getBin() { return bin; }
    public void setBin(SdkBytes v) { bin = v; }
    @DynamoDbAttribute("list") public List<String> getList() { return list; }
    public void setList(List<String> v) { list = v; }
    @DynamoDbAttribute("lb") public List<Boolean> getLb() { return lb; }
    public void setLb(List<Boolean> v) { lb = v; }
    @DynamoDbAttribute("map") public Map<String, Long> getMap() { return map; }
    public void setMap(Map<String, Long> v) { map = v; }
    @DynamoDbAttribute("doc") public V2Doc getDoc() { return doc; }
    public void setDoc(V2Doc v) { doc = v; }
    @DynamoDbAttribute("docs") public List<V2Doc> getDocs() { return docs; }
    public void setDocs(List<V2Doc> v) { docs = v; }
    @DynamoDbAttribute("note") public String getNote() { return note; }
    public void setNote(String v) { note = v; }
    @DynamoDbAttribute("absent") public String getAbsent() { return absent; }
    public void setAbsent(String v) { absent = v; }
    @DynamoDbIgnore public String getIgnored() { return ignored; }
    public void setIgnored(String v) { ignored = v; }
    // The Enhanced Client converts UUID natively too (UuidAttributeConverter): S, a Set<UUID> as SS.
    @DynamoDbAttribute("uid") public UUID getUid() { return uid; }
    public void setUid(UUID v) { uid = v; }
    @DynamoDbAttribute("uids") public Set<UUID> getUids() { return uids; }
    public void setUids(Set<UUID> v) { uids = v; }
  }

  // U2Item is U1Item for the Enhanced Client.
  @DynamoDbBean
  public static class U2Item {
    private UUID id;
    private Long version;
    private UUID ref;
    private String note;

    @DynamoDbPartitionKey @DynamoDbAttribute("id") public UUID getId() { return id; }
    public void setId(UUID v) { id = v; }
    @DynamoDbVersionAttribute @DynamoDbAttribute("version") public Long getVersion() { return version; }
    public void setVersion(Long v) { version = v; }
    @DynamoDbAttribute("ref") public UUID getRef() { return ref; }
    public void setRef(UUID v) { ref = v; }
    @DynamoDbAttribute("note") public String getNote() { return note; }
    public void setNote(String v) { note = v; }
  }

  static V2Doc v2Doc(String name, boolean flag, Instant at, List<String> tags) {
    V2Doc d = new V2Doc();
    d.setName(name);
    d.setFlag(flag);
    d.setAt(at);
    d.setTags(tags);
    return d;
  }

  static V2Item v2Fixture(String id) {
    V2Item it = new V2Item();
    it.setId(id);
    it.setSeq(SEQ);
    it.setStr("héllo, wörld ✓ \"quoted\"");
    it.setI(-2147483648);
    it.setL(-9007199254740993L);
    it.setD(6.02214076e23);
    it.setF(-0.25f);
    it.setBd(new BigDecimal("12345678901234567890.000000000000000001"));
    it.setB(true);
    it.setAt(Instant.ofEpochSecond(1700000000L, 123456789)); // nanoseconds survive
    it.setAtMillis(Instant.ofEpochMilli(1700000000123L));
    it.setSs(new LinkedHashSet<>(Arrays.asList("a", "b")));
    it.setNs(new LinkedHashSet<>(Arrays.asList(10L, 20L)));
    it.setBs(new LinkedHashSet<>(Arrays.asList(SdkBytes.fromByteArray(new byte[] {9}), SdkBytes.fromUtf8String("z"))));
    it.setBin(SdkBytes.fromByteArray(new byte[] {0, (byte) 128, (byte) 255}));
    it.setList(Arrays.asList("x", "y"));
    it.setLb(Arrays.asList(false, true));
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("one", 1L);
    it.setMap(m);
    V2Doc inner = v2Doc("inner", true, Instant.ofEpochMilli(1600000000000L), Arrays.asList("t1"));
    it.setDoc(inner);
    it.setDocs(Arrays.asList(inner, v2Doc("second", false, Instant.ofEpochSecond(1500000000L), Arrays.asList("t2", "t3"))));
    it.setNote("fixture");
    it.setIgnored("never stored");
    it.setUid(UUID.fromString(UID));
    it.setUids(new LinkedHashSet<>(Arrays.asList(UUID.fromString(UIDS[0]), UUID.fromString(UIDS[1]))));
    return it;
  }

  static void compareV2Doc(List<String> diffs, String path, V2Doc got, V2Doc want) {
    if (got == null) {
      diffs.add(path + ": missing");
      return;
    }
    eq(diffs, path + ".name", got.getName(), want.getName());
    eq(diffs, path + ".flag", got.getFlag(), want.getFlag());
    eq(diffs, path + ".at", got.getAt(), want.getAt());
    eq(diffs, path + ".tags", got.getTags(), want.getTags());
  }

  static List<String> compareV2(V2Item got, V2Item want) {
    List<String> diffs = new ArrayList<>();
    eq(diffs, "id", got.getId(), want.getId());
    eq(diffs, "seq", got.getSeq(), want.getSeq());
    eq(diffs, "str", got.getStr(), want.getStr());
    eq(diffs, "i", got.getI(), want.getI());
    eq(diffs, "l", got.getL(), want.getL());
    eq(diffs, "d", got.getD(), want.getD());
    eq(diffs, "f", got.getF(), want.getF());
    numEq(diffs, "bd", got.getBd(), want.getBd());
    eq(diffs, "b", got.getB(), want.getB());
    eq(diffs, "at", got.getAt(), want.getAt());
    eq(diffs, "atMillis", got.getAtMillis(), want.getAtMillis());
    eq(diffs, "ss", got.getSs(), want.getSs());
    eq(diffs, "ns", got.getNs(), want.getNs());
    eq(diffs, "bs", got.getBs(), want.getBs());
    eq(diffs, "bin", got.getBin(), want.getBin());
    eq(diffs, "list", got.getList(), want.getList());
    eq(diffs, "lb", got.getLb(), want.getLb());
    eq(diffs, "map", got.getMap(), want.getMap());
    compareV2Doc(diffs, "doc", got.getDoc(), want.getDoc());
    if (got.getDocs() == null || got.getDocs().size() != want.getDocs().size()) {
      diffs.add("docs: got " + show(got.getDocs()) + ", want " + want.getDocs().size() + " documents");
    } else {
      for (int k = 0; k < want.getDocs().size(); k++) {
        compareV2Doc(diffs, "docs[" + k + "]", got.getDocs().get(k), want.getDocs().get(k));
      }
    }
    eq(diffs, "note", got.getNote(), want.getNote());
    eq(diffs, "absent", got.getAbsent(), null);
    eq(diffs, "ignored", got.getIgnored(), null);
    eq(diffs, "uid", got.getUid(), want.getUid());
    eq(diffs, "uids", got.getUids(), want.getUids());
    return diffs;
  }

  // ---- comparison helpers -----------------------------------------------------

  static void eq(List<String> diffs, String name, Object got, Object want) {
    if (!Objects.deepEquals(got, want)) {
      diffs.add(name + ": got " + show(got) + ", want " + show(want));
    }
  }

  static void numEq(List<String> diffs, String name, BigDecimal got, BigDecimal want) {
    if (got == null || got.compareTo(want) != 0) {
      diffs.add(name + ": got " + show(got) + ", want " + show(want));
    }
  }

  static String show(Object o) {
    if (o == null) {
      return "null";
    }
    if (o instanceof byte[]) {
      return Arrays.toString((byte[]) o);
    }
    if (o instanceof Date) {
      return ((Date) o).toInstant().toString();
    }
    if (o instanceof Set && !((Set<?>) o).isEmpty() && ((Set<?>) o).iterator().next() instanceof ByteBuffer) {
      List<String> parts = new ArrayList<>();
      for (Object b : (Set<?>) o) {
        ByteBuffer bb = ((ByteBuffer) b).duplicate();
        byte[] a = new byte[bb.remaining()];
        bb.get(a);
        parts.add(Arrays.toString(a));
      }
      return parts.toString();
    }
    return o.getClass().getSimpleName() + "(" + o + ")";
  }

  // ---- the command loop -------------------------------------------------------

  static boolean isConflict(Throwable e) {
    return e instanceof com.amazonaws.services.dynamodbv2.model.ConditionalCheckFailedException
        || e instanceof software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (args.length != 7) {
      out.println("error usage: Interop <endpoint> <region> <access key> <secret key> <v1 table> <v2 table> <uuid table>");
      System.exit(2);
    }
    String endpoint = args[0], region = args[1], key = args[2], secret = args[3];

    AmazonDynamoDB v1Client = AmazonDynamoDBClientBuilder.standard()
        .withEndpointConfiguration(new AwsClientBuilder.EndpointConfiguration(endpoint, region))
        .withCredentials(new AWSStaticCredentialsProvider(new BasicAWSCredentials(key, secret)))
        .build();
    DynamoDBMapper mapper = new DynamoDBMapper(v1Client, DynamoDBMapperConfig.builder()
        .withTableNameOverride(DynamoDBMapperConfig.TableNameOverride.withTableNameReplacement(args[4]))
        .withConsistentReads(DynamoDBMapperConfig.ConsistentReads.CONSISTENT)
        .build());
    DynamoDBMapper uMapper = new DynamoDBMapper(v1Client, DynamoDBMapperConfig.builder()
        .withTableNameOverride(DynamoDBMapperConfig.TableNameOverride.withTableNameReplacement(args[6]))
        .withConsistentReads(DynamoDBMapperConfig.ConsistentReads.CONSISTENT)
        .build());

    DynamoDbClient v2Client = DynamoDbClient.builder()
        .endpointOverride(URI.create(endpoint))
        .region(Region.of(region))
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(key, secret)))
        .httpClient(UrlConnectionHttpClient.create())
        .build();
    DynamoDbEnhancedClient enhanced = DynamoDbEnhancedClient.builder().dynamoDbClient(v2Client).build();
    DynamoDbTable<V2Item> v2Table = enhanced.table(args[5], TableSchema.fromBean(V2Item.class));
    DynamoDbTable<U2Item> u2Table = enhanced.table(args[6], TableSchema.fromBean(U2Item.class));

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println("ready");
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split(" ", 4);
      if (w[0].equals("quit")) {
        break;
      }
      try {
        out.println(w[0].startsWith("u") ? runUUID(w, uMapper, u2Table) : run(w, mapper, v2Table));
      } catch (Exception e) {
        if (isConflict(e)) {
          out.println("conflict");
        } else {
          out.println(("error " + e).replace('\n', ' '));
        }
      }
    }
    v1Client.shutdown();
    v2Client.close();
  }

  static String run(String[] w, DynamoDBMapper mapper, DynamoDbTable<V2Item> v2Table) {
    String id = w.length > 1 ? w[1] : "";
    Key key = Key.builder().partitionValue(id).sortValue(SEQ).build();
    switch (w[0]) {
      case "v1.write": {
        V1Item it = v1Fixture(id);
        mapper.save(it);
        return "ok " + it.getVersion();
      }
      case "v1.check": {
        V1Item got = mapper.load(V1Item.class, id, SEQ);
        if (got == null) {
          return "fail item " + id + " not found";
        }
        List<String> diffs = compareV1(got, v1Fixture(id));
        return diffs.isEmpty() ? "ok " + got.getVersion() : "fail " + String.join("; ", diffs);
      }
      case "v1.resave": {
        V1Item got = mapper.load(V1Item.class, id, SEQ);
        mapper.save(got);
        return "ok " + got.getVersion();
      }
      case "v1.save": {
        V1Item it = v1Fixture(id);
        long held = Long.parseLong(w[2]);
        it.setVersion(held == 0 ? null : held);
        it.setNote(w[3]);
        mapper.save(it);
        return "ok " + it.getVersion();
      }
      case "v1.delete": {
        V1Item it = v1Fixture(id);
        long held = Long.parseLong(w[2]);
        it.setVersion(held == 0 ? null : held);
        mapper.delete(it);
        return "ok";
      }
      case "v1.load": {
        V1Item got = mapper.load(V1Item.class, id, SEQ);
        return got == null ? "missing" : "ok " + got.getVersion() + " " + got.getNote();
      }
      case "v2.write": {
        V2Item it = v2Fixture(id);
        v2Table.putItem(it);
        return "ok 1";
      }
      case "v2.check": {
        V2Item got = v2Table.getItem(r -> r.key(key).consistentRead(true));
        if (got == null) {
          return "fail item " + id + " not found";
        }
        List<String> diffs = compareV2(got, v2Fixture(id));
        return diffs.isEmpty() ? "ok " + got.getVersion() : "fail " + String.join("; ", diffs);
      }
      case "v2.resave": {
        V2Item got = v2Table.getItem(r -> r.key(key).consistentRead(true));
        v2Table.putItem(got); // the Enhanced Client does not update got's version
        return "ok " + (got.getVersion() + 1);
      }
      case "v2.save": {
        V2Item it = v2Fixture(id);
        long held = Long.parseLong(w[2]);
        it.setVersion(held == 0 ? null : held);
        it.setNote(w[3]);
        v2Table.putItem(it);
        return "ok " + (held + 1);
      }
      case "v2.load": {
        V2Item got = v2Table.getItem(r -> r.key(key).consistentRead(true));
        return got == null ? "missing" : "ok " + got.getVersion() + " " + got.getNote();
      }
      default:
        return "error unknown command " + w[0];
    }
  }

  static String runUUID(String[] w, DynamoDBMapper mapper, DynamoDbTable<U2Item> u2Table) {
    UUID id = UUID.fromString(w[1]);
    switch (w[0]) {
      case "u1.save": {
        U1Item it = new U1Item();
        it.setId(id);
        long held = Long.parseLong(w[2]);
        it.setVersion(held == 0 ? null : held);
        it.setRef(UUID.fromString(w[3]));
        it.setNote("java");
        mapper.save(it);
        return "ok " + it.getVersion();
      }
      case "u1.load": {
        U1Item got = mapper.load(U1Item.class, id);
        return got == null ? "missing" : "ok " + got.getVersion() + " " + got.getRef();
      }
      case "u2.save": {
        U2Item it = new U2Item();
        it.setId(id);
        long held = Long.parseLong(w[2]);
        it.setVersion(held == 0 ? null : held);
        it.setRef(UUID.fromString(w[3]));
        it.setNote("java");
        u2Table.putItem(it);
        return "ok " + (held + 1);
      }
      case "u2.load": {
        U2Item got = u2Table.getItem(r -> r.key(Key.builder().partitionValue(id.toString()).build()).consistentRead(true));
        return got == null ? "missing" : "ok " + got.getVersion() + " " + got.getRef();
      }
      default:
        return "error unknown command " + w[0];
    }
  }
}
