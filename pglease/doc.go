package pglease
