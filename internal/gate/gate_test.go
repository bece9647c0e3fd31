package gate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The cache of stored items keeps the most recently stored within its
// bounds of entries and bytes, and not items over cacheItemSize; the
// gate's map holds exactly the states cached (no key is in use here), and
// a key in use is never evicted nor counted.
func TestItemCacheBounds(t *testing.T) {
	var g Gate[string, struct{}, struct{}]
	c := &g.cache
	item := func(n int) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}, "pad": &types.AttributeValueMemberS{Value: strings.Repeat("x", n)}}
	}
	for i := range CacheEntries + 10 {
		cachePut(&g, strconv.Itoa(i), item(1), 0)
	}
	if c.n != CacheEntries || len(g.keys) != CacheEntries || itemOf(cachedState(&g, "0")) != nil || itemOf(cachedState(&g, strconv.Itoa(CacheEntries+9))) == nil {
		t.Fatalf("%d entries (map %d); want the %d most recent", c.n, len(g.keys), CacheEntries)
	}
	cachePut(&g, "big", item(cacheItemSize+1), 0)
	if g.keys["big"] != nil {
		t.Error("an item over cacheItemSize was kept")
	}
	inUse := &Key[string, struct{}, struct{}]{key: "in use", last: item(1), refs: 1}
	g.keys[inUse.key] = inUse
	for i := range 100 {
		cachePut(&g, "m"+strconv.Itoa(i), item(cacheItemSize-100), 0)
	}
	if c.bytes > cacheBytes {
		t.Errorf("%d bytes cached, over %d", c.bytes, cacheBytes)
	}
	if itemOf(cachedState(&g, "m99")) == nil {
		t.Error("the most recent item was evicted")
	}
	if g.keys[inUse.key] != inUse || inUse.cached {
		t.Error("the state of a key in use was evicted or cached")
	}
	delete(g.keys, inUse.key)
	// The list and the map agree, newest first, and the bytes are the
	// sum of what is cached.
	n, bytes := 0, 0
	for e := c.newest; e != nil; e = e.older {
		if g.keys[e.key] != e || !e.cached || e.older != nil && e.older.newer != e || e.older == nil && c.oldest != e {
			t.Fatalf("entry %v is not linked as the map says", e.key)
		}
		n, bytes = n+1, bytes+e.lastSize
	}
	if n != c.n || n != len(g.keys) || bytes != c.bytes {
		t.Errorf("list of %d entries, %d bytes; the cache counts %d (map %d), %d bytes", n, bytes, c.n, len(g.keys), c.bytes)
	}
}

// cachePut caches item under key, as the gate does when key goes quiet.
func cachePut[K comparable, T, O any](g *Gate[K, T, O], key K, item map[string]types.AttributeValue, expect int) {
	if g.keys == nil {
		g.keys = map[K]*Key[K, T, O]{}
	}
	e := &Key[K, T, O]{key: key, last: item, expect: expect}
	g.keys[key] = e
	g.forget(key, e)
}

// cachedState returns the state of key when the gate holds it cached (the
// key is quiet), nil otherwise. g.mu is held or g is not shared.
func cachedState[K comparable, T, O any](g *Gate[K, T, O], key K) *Key[K, T, O] {
	if e := g.keys[key]; e != nil && e.cached {
		return e
	}
	return nil
}

// itemOf returns the item of an itemCache entry (nil: none).
func itemOf[K comparable, T, O any](e *Key[K, T, O]) map[string]types.AttributeValue {
	if e == nil {
		return nil
	}
	return e.last
}
