package integration

// Attacks on the unversioned Update guard (issue 12 item 2): the guard
// condition repeats every modeled attribute, which can push a request that
// Save accepts over DynamoDB's limits.

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// wideDoc is an unversioned type with many optional attributes, most of
// them unset (absent in the stored item).
type wideDoc struct {
	ID   string  `dynamo:"id,hash"`
	N    int     `dynamo:"n"`
	F000 *string `dynamo:"f000"`
	F001 *string `dynamo:"f001"`
	F002 *string `dynamo:"f002"`
	F003 *string `dynamo:"f003"`
	F004 *string `dynamo:"f004"`
	F005 *string `dynamo:"f005"`
	F006 *string `dynamo:"f006"`
	F007 *string `dynamo:"f007"`
	F008 *string `dynamo:"f008"`
	F009 *string `dynamo:"f009"`
	F010 *string `dynamo:"f010"`
	F011 *string `dynamo:"f011"`
	F012 *string `dynamo:"f012"`
	F013 *string `dynamo:"f013"`
	F014 *string `dynamo:"f014"`
	F015 *string `dynamo:"f015"`
	F016 *string `dynamo:"f016"`
	F017 *string `dynamo:"f017"`
	F018 *string `dynamo:"f018"`
	F019 *string `dynamo:"f019"`
	F020 *string `dynamo:"f020"`
	F021 *string `dynamo:"f021"`
	F022 *string `dynamo:"f022"`
	F023 *string `dynamo:"f023"`
	F024 *string `dynamo:"f024"`
	F025 *string `dynamo:"f025"`
	F026 *string `dynamo:"f026"`
	F027 *string `dynamo:"f027"`
	F028 *string `dynamo:"f028"`
	F029 *string `dynamo:"f029"`
	F030 *string `dynamo:"f030"`
	F031 *string `dynamo:"f031"`
	F032 *string `dynamo:"f032"`
	F033 *string `dynamo:"f033"`
	F034 *string `dynamo:"f034"`
	F035 *string `dynamo:"f035"`
	F036 *string `dynamo:"f036"`
	F037 *string `dynamo:"f037"`
	F038 *string `dynamo:"f038"`
	F039 *string `dynamo:"f039"`
	F040 *string `dynamo:"f040"`
	F041 *string `dynamo:"f041"`
	F042 *string `dynamo:"f042"`
	F043 *string `dynamo:"f043"`
	F044 *string `dynamo:"f044"`
	F045 *string `dynamo:"f045"`
	F046 *string `dynamo:"f046"`
	F047 *string `dynamo:"f047"`
	F048 *string `dynamo:"f048"`
	F049 *string `dynamo:"f049"`
	F050 *string `dynamo:"f050"`
	F051 *string `dynamo:"f051"`
	F052 *string `dynamo:"f052"`
	F053 *string `dynamo:"f053"`
	F054 *string `dynamo:"f054"`
	F055 *string `dynamo:"f055"`
	F056 *string `dynamo:"f056"`
	F057 *string `dynamo:"f057"`
	F058 *string `dynamo:"f058"`
	F059 *string `dynamo:"f059"`
	F060 *string `dynamo:"f060"`
	F061 *string `dynamo:"f061"`
	F062 *string `dynamo:"f062"`
	F063 *string `dynamo:"f063"`
	F064 *string `dynamo:"f064"`
	F065 *string `dynamo:"f065"`
	F066 *string `dynamo:"f066"`
	F067 *string `dynamo:"f067"`
	F068 *string `dynamo:"f068"`
	F069 *string `dynamo:"f069"`
	F070 *string `dynamo:"f070"`
	F071 *string `dynamo:"f071"`
	F072 *string `dynamo:"f072"`
	F073 *string `dynamo:"f073"`
	F074 *string `dynamo:"f074"`
	F075 *string `dynamo:"f075"`
	F076 *string `dynamo:"f076"`
	F077 *string `dynamo:"f077"`
	F078 *string `dynamo:"f078"`
	F079 *string `dynamo:"f079"`
	F080 *string `dynamo:"f080"`
	F081 *string `dynamo:"f081"`
	F082 *string `dynamo:"f082"`
	F083 *string `dynamo:"f083"`
	F084 *string `dynamo:"f084"`
	F085 *string `dynamo:"f085"`
	F086 *string `dynamo:"f086"`
	F087 *string `dynamo:"f087"`
	F088 *string `dynamo:"f088"`
	F089 *string `dynamo:"f089"`
	F090 *string `dynamo:"f090"`
	F091 *string `dynamo:"f091"`
	F092 *string `dynamo:"f092"`
	F093 *string `dynamo:"f093"`
	F094 *string `dynamo:"f094"`
	F095 *string `dynamo:"f095"`
	F096 *string `dynamo:"f096"`
	F097 *string `dynamo:"f097"`
	F098 *string `dynamo:"f098"`
	F099 *string `dynamo:"f099"`
	F100 *string `dynamo:"f100"`
	F101 *string `dynamo:"f101"`
	F102 *string `dynamo:"f102"`
	F103 *string `dynamo:"f103"`
	F104 *string `dynamo:"f104"`
	F105 *string `dynamo:"f105"`
	F106 *string `dynamo:"f106"`
	F107 *string `dynamo:"f107"`
	F108 *string `dynamo:"f108"`
	F109 *string `dynamo:"f109"`
	F110 *string `dynamo:"f110"`
	F111 *string `dynamo:"f111"`
	F112 *string `dynamo:"f112"`
	F113 *string `dynamo:"f113"`
	F114 *string `dynamo:"f114"`
	F115 *string `dynamo:"f115"`
	F116 *string `dynamo:"f116"`
	F117 *string `dynamo:"f117"`
	F118 *string `dynamo:"f118"`
	F119 *string `dynamo:"f119"`
	F120 *string `dynamo:"f120"`
	F121 *string `dynamo:"f121"`
	F122 *string `dynamo:"f122"`
	F123 *string `dynamo:"f123"`
	F124 *string `dynamo:"f124"`
	F125 *string `dynamo:"f125"`
	F126 *string `dynamo:"f126"`
	F127 *string `dynamo:"f127"`
	F128 *string `dynamo:"f128"`
	F129 *string `dynamo:"f129"`
	F130 *string `dynamo:"f130"`
	F131 *string `dynamo:"f131"`
	F132 *string `dynamo:"f132"`
	F133 *string `dynamo:"f133"`
	F134 *string `dynamo:"f134"`
	F135 *string `dynamo:"f135"`
	F136 *string `dynamo:"f136"`
	F137 *string `dynamo:"f137"`
	F138 *string `dynamo:"f138"`
	F139 *string `dynamo:"f139"`
}

// An unversioned type with 140 optional attributes: Save works; Update,
// whose guard spells "attribute_not_exists(#aN)" for each absent one and so
// passes DynamoDB's 4 KB expression limit, says so before sending, with the
// fix (add a version attribute).
func TestUnversionedUpdateGuardTooLongRefused(t *testing.T) {
	c := ctx(t)
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "wide", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := dynamo.NewTable[wideDoc](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(c, wideDoc{ID: "w", N: 1}); err != nil {
		t.Fatalf("Save: %v", err)
	}
	_, err = tb.Update(c, wideDoc{ID: "w"}, func(d wideDoc) (wideDoc, error) {
		d.N++
		return d, nil
	})
	// Refused before sending, saying what to do (a version attribute pins
	// the write with one token instead of every attribute).
	if !errors.Is(err, dynamo.ErrInvalidInput) || !strings.Contains(err.Error(), "4 KB") || !strings.Contains(err.Error(), "add a version attribute") {
		t.Fatalf("Update of a 141-attribute unversioned item: %v; want ErrInvalidInput naming the 4 KB limit and the fix", err)
	}
}

// Update creates an item of a type without a version with SavePut,
// SaveUpdateSkipNulls or SaveAppendSet: the guard of an absent item
// ("attribute_not_exists(#kh)") sends only the attribute names the write
// uses, since DynamoDB refuses unused ones ("Value provided in
// ExpressionAttributeNames unused in expressions").
func TestUnversionedUpdateCreates(t *testing.T) {
	for _, b := range []dynamo.SaveBehavior{dynamo.SavePut, dynamo.SaveUpdateSkipNulls, dynamo.SaveAppendSet} {
		t.Run(b.String(), func(t *testing.T) {
			name := dynamotest.KeyTable(t, dynamotest.Client(t), "uc", "id", types.ScalarAttributeTypeS, "", "")
			tb, err := dynamo.NewTable[unversionedCounter](dynamo.NewMapper(dynamotest.Client(t)), name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tb.Update(ctx(t), unversionedCounter{ID: "c"}, func(c unversionedCounter) (unversionedCounter, error) {
				c.N++
				return c, nil
			}, dynamo.WithSaveBehavior(b))
			if err != nil || got.N != 1 {
				t.Fatalf("Update creating an unversioned item with %v = %+v, %v", b, got, err)
			}
		})
	}
}
