module github.com/ringflake/ringflake/pglease

go 1.24.0

replace github.com/ringflake/ringflake => ../

require (
	github.com/jackc/pgx/v5 v5.8.0 // v5.9 and later need go 1.25; this module keeps go 1.24.0 like the root
	github.com/ringflake/ringflake v0.1.0
)

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/stretchr/testify v1.12.1
	golang.org/x/sync v0.19.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.29.0 // indirect
)
