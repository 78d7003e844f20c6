package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart is a set of panels stacked vertically over one shared x axis.
type Chart struct {
	Title  string
	XLabel string
	Panels []Panel
}

// Panel is one plot: a y axis and one line per series.
type Panel struct {
	YLabel string
	Lines  []Line
}

// Line is one series, drawn as a polyline (a dot when it has one point).
type Line struct {
	Name   string
	Points []XY
}

// XY is one point in data units.
type XY struct{ X, Y float64 }

// palette gives each line a distinct colour, in order.
var palette = []string{
	"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
}

// Layout, in pixels.
const (
	svgWidth    = 900
	marginLeft  = 90
	marginRight = 170 // room for the legend
	marginTop   = 50
	panelHeight = 240
	panelGap    = 70
	marginBot   = 55
	plotWidth   = svgWidth - marginLeft - marginRight
	xTickCount  = 8
	yTickCount  = 5
)

// WriteSVG draws c as a standalone SVG document.
func WriteSVG(w io.Writer, c Chart) error {
	n := max(len(c.Panels), 1)
	height := marginTop + n*panelHeight + (n-1)*panelGap + marginBot
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="16" font-weight="bold">%s</text>`+"\n", marginLeft, esc(c.Title))

	xMax := 0.0
	for _, p := range c.Panels {
		for _, l := range p.Lines {
			for _, pt := range l.Points {
				xMax = math.Max(xMax, pt.X)
			}
		}
	}
	xStep, xTop := niceScale(xMax, xTickCount)
	for i, p := range c.Panels {
		top := marginTop + i*(panelHeight+panelGap)
		drawPanel(&b, p, top, xStep, xTop, c.XLabel, i == len(c.Panels)-1)
	}
	drawLegend(&b, c)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func drawPanel(b *strings.Builder, p Panel, top int, xStep, xTop float64, xLabel string, last bool) {
	yMax := 0.0
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			yMax = math.Max(yMax, pt.Y)
		}
	}
	yStep, yTop := niceScale(yMax, yTickCount)
	bottom := top + panelHeight
	px := func(x float64) float64 { return marginLeft + x/xTop*plotWidth }
	py := func(y float64) float64 { return float64(bottom) - y/yTop*panelHeight }

	// Grid, ticks and labels.
	for y := 0.0; y <= yTop+yStep/2; y += yStep {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", marginLeft, py(y), marginLeft+plotWidth, py(y))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", marginLeft-6, py(y)+4, tickLabel(y, yStep))
	}
	for x := 0.0; x <= xTop+xStep/2; x += xStep {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>`+"\n", px(x), bottom, px(x), bottom+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(x), bottom+18, tickLabel(x, xStep))
	}
	// Axes.
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", marginLeft, top, marginLeft, bottom)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", marginLeft, bottom, marginLeft+plotWidth, bottom)
	fmt.Fprintf(b, `<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">%s</text>`+"\n",
		18, top+panelHeight/2, esc(p.YLabel))
	if last {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", marginLeft+plotWidth/2, bottom+40, esc(xLabel))
	}
	// Series.
	for i, l := range p.Lines {
		color := palette[i%len(palette)]
		if len(l.Points) == 0 {
			continue
		}
		if len(l.Points) > 1 {
			pts := make([]string, len(l.Points))
			for j, pt := range l.Points {
				pts[j] = fmt.Sprintf("%.1f,%.1f", px(pt.X), py(pt.Y))
			}
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s</title></polyline>`+"\n",
				color, strings.Join(pts, " "), esc(l.Name))
		}
		if len(l.Points) <= 30 {
			for _, pt := range l.Points {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(pt.X), py(pt.Y), color)
			}
		}
	}
}

// drawLegend lists the first panel's lines (every panel has the same ones).
func drawLegend(b *strings.Builder, c Chart) {
	if len(c.Panels) == 0 {
		return
	}
	x := marginLeft + plotWidth + 20
	for i, l := range c.Panels[0].Lines {
		y := marginTop + 10 + i*20
		color := palette[i%len(palette)]
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", x, y, x+20, y, color)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+26, y+4, esc(l.Name))
	}
}

// niceScale picks a tick step of 1, 2 or 5 times a power of ten giving about
// n ticks up to max, and the axis top (a multiple of the step >= max).
func niceScale(maxV float64, n int) (step, top float64) {
	if maxV <= 0 || math.IsNaN(maxV) || math.IsInf(maxV, 0) {
		return 1, 1
	}
	raw := maxV / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		step = mag
	case f <= 2:
		step = 2 * mag
	case f <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	top = math.Ceil(maxV/step-1e-9) * step
	return step, top
}

// tickLabel formats a tick value with as many decimals as the step needs.
func tickLabel(v, step float64) string {
	if step >= 1 {
		if v >= 10000 {
			return Thousands(v)
		}
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	dec := int(math.Ceil(-math.Log10(step)))
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func esc(s string) string { return html.EscapeString(s) }
