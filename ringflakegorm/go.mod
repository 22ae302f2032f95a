module github.com/ringflake/ringflake/ringflakegorm

go 1.24.0

replace github.com/ringflake/ringflake => ../

require (
	github.com/ringflake/ringflake v0.1.0
	github.com/stretchr/testify v1.12.1
	gorm.io/driver/postgres v1.6.0 // v1.6.1 and later need go 1.25
	gorm.io/gorm v1.31.2
)

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.8.0 // indirect; v5.9 and later need go 1.25
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.19.0
	golang.org/x/text v0.29.0 // indirect
)
