// Package chart lays out the panel's charts: columns over days, a line over
// days, and labelled horizontal bars. It computes the geometry of an SVG
// drawing; the panel's template draws it, with no script and no inline
// style, so the pages keep their strict Content-Security-Policy.
//
// Values are float64 because they only place shapes; the texts shown for
// them (money above all) are formatted by the caller from exact values.
package chart

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Point is one value of a chart: its label (a day, a store, a level), its
// value, the text that shows it to people, and the exact value the data
// came with (the chart's data table carries it).
type Point struct {
	Label string
	Value float64
	Text  string
	Exact string
}

// Chart is a laid-out chart. Coordinates are in the units of its viewBox,
// Width × Height.
type Chart struct {
	ID, Title     string
	Width, Height int
	Kind          string   // "columns", "line" or "bars": the CSS class of the drawing
	Marks         []Mark   // a column or a bar each
	Line          string   // the polyline's points, for a line chart
	Ticks         []Tick   // the value axis
	Labels        []Label  // the category axis
	Points        []Point  // what the chart shows, for its data table
	Notes         []string // sentences shown under the title, what the chart alone cannot say
}

// Mark is a rectangle of a column or bar chart, with its tooltip.
type Mark struct {
	X, Y, W, H float64
	Title      string
}

// Tick is a gridline of the value axis, at X1,Y1–X2,Y2, with its label at
// TX,TY.
type Tick struct {
	X1, Y1, X2, Y2 float64
	TX, TY         float64
	Text           string
}

// Label is a text of the category axis (or a bar's name and value).
type Label struct {
	X, Y   float64
	Anchor string // start, middle or end
	Text   string
}

// Empty says the chart has nothing to draw.
func (c Chart) Empty() bool {
	for _, p := range c.Points {
		if p.Value != 0 {
			return false
		}
	}
	return true
}

// The plot area of column and line charts, within a 720 × 240 drawing.
const (
	width, height       = 720, 240
	left, right         = 64.0, 12.0
	top, bottom         = 12.0, 28.0
	maxCategoryLabels   = 8
	barHeight, barGap   = 22.0, 8.0
	barLabels, barTexts = 170.0, 120.0
	maxBarTexts         = 330.0
	charWidth           = 6.6 // of the 12 px system font, on average
	maxLabelRunes       = 22  // what fits barLabels
)

// Columns lays out one column per point (days, in order) under a value
// axis that starts at zero.
func Columns(id, title string, pts []Point, tickText func(float64) string) Chart {
	c, scale := overTime(id, title, "columns", pts, tickText)
	step := (width - left - right) / float64(max(len(pts), 1))
	for i, p := range pts {
		h := scale(0) - scale(p.Value)
		c.Marks = append(c.Marks, Mark{X: left + float64(i)*step + step*0.1, Y: scale(0) - h, W: step * 0.8, H: h,
			Title: p.Label + ": " + p.Text})
	}
	return c
}

// Line lays out a line through the points (days, in order); each point has
// an invisible mark, a slice of the plot's full height, for its tooltip.
func Line(id, title string, pts []Point, tickText func(float64) string) Chart {
	c, scale := overTime(id, title, "line", pts, tickText)
	step := (width - left - right) / float64(max(len(pts)-1, 1))
	var line []byte
	for i, p := range pts {
		x, y := left+float64(i)*step, scale(p.Value)
		line = fmt.Appendf(line, "%s,%s ", Num(x), Num(y))
		c.Marks = append(c.Marks, Mark{X: x - step/2, Y: top, W: step, H: height - top - bottom, Title: p.Label + ": " + p.Text})
	}
	c.Line = string(line)
	return c
}

// overTime lays out the axes of a chart over the points' categories and
// returns the scale from a value to its y. The value axis starts at zero:
// every chart here counts or sums what cannot be negative.
func overTime(id, title, kind string, pts []Point, tickText func(float64) string) (Chart, func(float64) float64) {
	c := Chart{ID: id, Title: title, Kind: kind, Width: width, Height: height, Points: pts}
	hi := 0.0
	for _, p := range pts {
		hi = math.Max(hi, p.Value)
	}
	step, hi := niceStep(hi)
	plotH := height - top - bottom
	scale := func(v float64) float64 { return top + plotH*(1-v/hi) }
	for i := 0.0; i*step <= hi+step/2; i++ {
		y := scale(i * step)
		c.Ticks = append(c.Ticks, Tick{X1: left, Y1: y, X2: width - right, Y2: y, TX: left - 6, TY: y + 4, Text: tickText(i * step)})
	}
	every := max(1, (len(pts)+maxCategoryLabels-1)/maxCategoryLabels)
	for i := 0; i < len(pts); i += every {
		x := left + (width-left-right)*(float64(i)+0.5)/float64(len(pts))
		if kind == "line" {
			x = left + (width-left-right)*float64(i)/float64(max(len(pts)-1, 1))
		}
		c.Labels = append(c.Labels, Label{X: x, Y: height - 8, Anchor: "middle", Text: pts[i].Label})
	}
	return c, scale
}

// Bars lays out one labelled horizontal bar per point, in the order given.
func Bars(id, title string, pts []Point) Chart {
	c := Chart{ID: id, Title: title, Kind: "bars", Width: width, Points: pts}
	c.Height = int(top + float64(len(pts))*(barHeight+barGap) + barGap)
	hi := 0.0
	for _, p := range pts {
		hi = math.Max(hi, p.Value)
	}
	if hi == 0 {
		hi = 1
	}
	// The values' texts get the room the longest needs, within reason.
	texts := barTexts
	for _, p := range pts {
		texts = max(texts, math.Min(maxBarTexts, charWidth*float64(utf8.RuneCountInString(p.Text))+12))
	}
	span := width - barLabels - texts
	for i, p := range pts {
		y := top + float64(i)*(barHeight+barGap)
		w := span * math.Max(p.Value, 0) / hi
		c.Marks = append(c.Marks, Mark{X: barLabels, Y: y, W: w, H: barHeight, Title: p.Label + ": " + p.Text})
		c.Labels = append(c.Labels,
			Label{X: barLabels - 8, Y: y + barHeight*0.7, Anchor: "end", Text: clip(p.Label, maxLabelRunes)},
			Label{X: barLabels + w + 6, Y: y + barHeight*0.7, Anchor: "start", Text: p.Text})
	}
	return c
}

// clip shortens s to n characters, the last an ellipsis; the tooltip and
// the data table keep the whole text.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// niceStep returns a gridline step of 1, 2 or 5 × 10ⁿ that splits span in
// at most five, and the axis' top: the first multiple of the step at or
// above span.
func niceStep(span float64) (step, top float64) {
	if span <= 0 {
		return 1, 1
	}
	raw := span / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return step, math.Ceil(span/step) * step
}

// Num writes a coordinate with two decimals at most.
func Num(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }
