package check_test

import (
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
)

// The crawler's robots.txt gate is the checker's RobotsGate without either
// package importing the other: the pipeline hands one to both.
var _ check.RobotsGate = (*crawler.RobotsGate)(nil)
