package dynamo_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net/netip"

	"github.com/ddbkit/dynamo"
)

// DeviceID is a uuid.UUID-style identifier: 16 bytes, written as text.
type DeviceID [16]byte

func (id DeviceID) MarshalText() ([]byte, error) {
	return []byte(hex.EncodeToString(id[:])), nil
}

func (id *DeviceID) UnmarshalText(b []byte) error {
	if len(b) != 32 {
		return errors.New("device id: want 32 hex digits")
	}
	_, err := hex.Decode(id[:], b)
	return err
}

type Device struct {
	ID      DeviceID    `dynamo:"id,hash"` // an S key: CreateTable declares it S
	Addr    netip.Addr  `dynamo:"addr"`    // S: "192.0.2.7"
	Peers   []DeviceID  `dynamo:"peers,set"`
	Gateway *netip.Addr `dynamo:"gw,omitempty"`
	Version int64       `dynamo:"v,version"`
}

// Types with MarshalText and UnmarshalText — UUIDs, netip.Addr, net.IP —
// are stored as strings, as Java stores a java.util.UUID: the attributes
// above hold "0a0b…", "192.0.2.7" and a string set.
func ExampleNewTable_textTypes() {
	ctx := context.Background()
	devices, err := dynamo.NewTable[Device](dynamo.NewMapper(client), "Devices")
	if err != nil {
		log.Fatal(err)
	}
	d := Device{ID: DeviceID{0x0a, 0x0b}, Addr: netip.MustParseAddr("192.0.2.7")}
	saved, err := devices.Save(ctx, d)
	if err != nil {
		log.Fatal(err)
	}
	got, err := devices.Load(ctx, Device{ID: saved.ID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Addr, got.Version)
	// Output: 192.0.2.7 1
}
