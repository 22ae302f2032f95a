module github.com/ringflake/ringflake/chronyhealth

go 1.24.0

replace github.com/ringflake/ringflake => ../

require (
	github.com/ringflake/ringflake v0.1.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
