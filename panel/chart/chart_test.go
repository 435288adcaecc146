package chart

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct {
		span, step, top float64
	}{
		{0, 1, 1},
		{1, 0.2, 1},
		{7, 2, 8},
		{10, 2, 10},
		{26000, 10000, 30000},
		{1970850, 500000, 2000000},
		{3, 1, 3},
	} {
		step, top := niceStep(tc.span)
		require.InDelta(t, tc.step, step, 1e-9, "step of %v", tc.span)
		require.InDelta(t, tc.top, top, 1e-9, "top of %v", tc.span)
	}
}

func TestLayouts(t *testing.T) {
	pts := []Point{{Label: "a", Value: 10, Text: "10"}, {Label: "b", Value: 0, Text: "0"}, {Label: "c", Value: 5, Text: "5"}}
	text := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

	cols := Columns("c", "Columns", pts, text)
	require.Len(t, cols.Marks, 3)
	require.InDelta(t, 0, cols.Marks[1].H, 1e-9, "a zero has no height")
	require.InDelta(t, 2*cols.Marks[2].H, cols.Marks[0].H, 1e-9, "heights are proportional")
	require.InDelta(t, height-bottom, cols.Marks[0].Y+cols.Marks[0].H, 1e-9, "columns stand on the axis")
	require.Equal(t, "0", cols.Ticks[0].Text)
	require.Equal(t, "10", cols.Ticks[len(cols.Ticks)-1].Text)
	require.False(t, cols.Empty())

	line := Line("l", "Line", pts, text)
	require.Equal(t, "64,12 386,212 708,112 ", line.Line)

	bars := Bars("b", "Bars", pts)
	require.Len(t, bars.Marks, 3)
	require.InDelta(t, width-barLabels-barTexts, bars.Marks[0].W, 1e-9, "the largest bar spans the plot")
	require.InDelta(t, bars.Marks[0].W/2, bars.Marks[2].W, 1e-9)
	require.Len(t, bars.Labels, 6, "a name and a value per bar")

	long := Bars("l", "Long", []Point{{Label: "Semana do cliente: 10% no site e nas lojas", Value: 1, Text: "R$ 41,386.38 · 133 redemptions · R$ 2,130.00 off"}})
	require.Equal(t, "Semana do cliente: 10…", long.Labels[0].Text, "a long name is clipped")
	require.Less(t, long.Marks[0].W, bars.Marks[0].W, "a long value text takes room from the bars")
	require.LessOrEqual(t, long.Labels[1].X+charWidth*float64(len("R$ 41,386.38 · 133 redemptions · R$ 2,130.00 off")), float64(width)+12)

	many := make([]Point, 365)
	require.True(t, Columns("e", "Empty", many, text).Empty())
	require.LessOrEqual(t, len(Columns("e", "Empty", many, text).Labels), maxCategoryLabels)
}
