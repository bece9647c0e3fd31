// Command yourprogram is the program a user writes from the README: it
// builds its DynamoDB client with config.LoadDefaultConfig and nothing
// else, and is run against DynamoDB Local with the variables dynamodb-local
// prints. It creates the table named by its argument and prints the tables
// it lists, through two clients: one exactly as the README's example builds
// it, one with BaseEndpoint from DYNAMODB_ENDPOINT.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Println("yourprogram:", err)
		os.Exit(1)
	}
}

func run(table string) error {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	plain := dynamodb.NewFromConfig(cfg)
	_, err = plain.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return err
	}
	explicit := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if ep := os.Getenv("DYNAMODB_ENDPOINT"); ep != "" {
			o.BaseEndpoint = aws.String(ep)
		}
	})
	for name, c := range map[string]*dynamodb.Client{"plain": plain, "explicit": explicit} {
		out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			return fmt.Errorf("%s client: %w", name, err)
		}
		fmt.Printf("%s tables=%s\n", name, strings.Join(out.TableNames, ","))
	}
	return nil
}
