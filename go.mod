module github.com/linkrot/linkrot

go 1.26.8
