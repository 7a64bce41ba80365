package dashboard

import (
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/audit"
)

// trendChart is the runs-over-time line chart, drawn on the server as
// inline SVG: one line each for broken targets, drifted targets and
// unprotected links (no Robust Links, no mset).
type trendChart struct {
	Width, Height int
	Series        []chartSeries
	YTicks        []chartTick
	XTicks        []chartTick
}

type chartSeries struct {
	Name, Class string
	Points      string
	Dots        []chartDot
}

type chartDot struct {
	X, Y  int
	Run   int64
	Value int
	Title string
}

type chartTick struct {
	X, Y  int
	Label string
}

const (
	chartW, chartH             = 760, 240
	chartLeft, chartRight      = 48, 748
	chartTop, chartBottom      = 12, 206
	chartXLabelY, chartTicksNo = 228, 4
)

func newTrendChart(points []audit.TrendPoint, unprotected map[int64]int) trendChart {
	c := trendChart{Width: chartW, Height: chartH}
	if len(points) == 0 {
		return c
	}
	type col struct {
		name, class string
		val         func(p audit.TrendPoint) int
	}
	cols := []col{
		{"broken", "bad", func(p audit.TrendPoint) int { return p.Broken }},
		{"drifted", "warn", func(p audit.TrendPoint) int { return p.Drifted }},
		{"unprotected", "info", func(p audit.TrendPoint) int { return unprotected[p.ID] }},
	}
	top := 1
	for _, p := range points {
		for _, cl := range cols {
			top = max(top, cl.val(p))
		}
	}
	// Round the axis up to a multiple of the tick count.
	step := (top + chartTicksNo - 1) / chartTicksNo
	top = step * chartTicksNo
	x := func(i int) int {
		if len(points) == 1 {
			return (chartLeft + chartRight) / 2
		}
		return chartLeft + i*(chartRight-chartLeft)/(len(points)-1)
	}
	y := func(v int) int { return chartBottom - v*(chartBottom-chartTop)/top }
	for k := 0; k <= chartTicksNo; k++ {
		v := k * step
		c.YTicks = append(c.YTicks, chartTick{X: chartLeft - 6, Y: y(v), Label: strconv.Itoa(v)})
	}
	every := max(1, (len(points)+7)/8)
	for i, p := range points {
		if i%every == 0 || i == len(points)-1 {
			c.XTicks = append(c.XTicks, chartTick{X: x(i), Y: chartXLabelY, Label: "#" + strconv.FormatInt(p.ID, 10)})
		}
	}
	for _, cl := range cols {
		s := chartSeries{Name: cl.name, Class: cl.class}
		var pts []string
		for i, p := range points {
			d := chartDot{X: x(i), Y: y(cl.val(p)), Run: p.ID, Value: cl.val(p)}
			d.Title = "run #" + strconv.FormatInt(p.ID, 10) + " (" + fmtTime(p.StartedAt) + "): " + strconv.Itoa(d.Value) + " " + cl.name
			s.Dots = append(s.Dots, d)
			pts = append(pts, strconv.Itoa(d.X)+","+strconv.Itoa(d.Y))
		}
		s.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, s)
	}
	return c
}
