/*
 * The interactive SVG flamegraph (collapse_write_svg()), written by stackspy
 * itself so a user needs neither Perl nor flamegraph.pl.
 *
 * The layout is flamegraph.pl's: the root at the bottom, one row per stack
 * level, each frame as wide as its samples, frames merged by prefix and
 * sorted by name on each level (so the same samples always give the same
 * file). The frames are static SVG (a viewer without JavaScript still shows
 * the graph and the tooltips); the embedded script only adds zoom, search
 * and the details line, and needs nothing from outside the file.
 *
 * Each frame is one <g> holding <title>NAME (N samples, P%)</title>, a
 * <rect>, and a <text> label when the name has room. The frames come in
 * depth-first order with the root first. The script finds a frame's first
 * sample from its x, which is written with enough decimals for that (see
 * x_decimals()), and its samples from the title: no extra attributes, so
 * the file stays small.
 *
 * Frames narrower than min_width are not written at all (the size of the
 * file follows what can be seen, not the number of stacks). The search can
 * only count what is drawn, so when frames were dropped its percentage is a
 * lower bound and says "at least".
 */
#include "config.h"

#include "base/base.h"
#include "collapse/collapse-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FONT_SIZE 12
#define FONT_WIDTH 0.59		/* average glyph width / font size, Verdana */
#define XPAD 10
#define YPAD_TOP 36		/* title and controls */
#define YPAD_SUBTITLE 18
#define YPAD_BOTTOM (FONT_SIZE * 2 + 10)	/* the details line */
#define ROOT_ID UINT32_MAX
#define HIGHLIGHT "#e600e6"

void collapse_svg_options_init(struct collapse_svg_options *opts)
{
	opts->title = NULL;
	opts->subtitle = NULL;
	opts->width = 1200;
	opts->frame_height = 16;
	opts->min_width = 0.1;
}

/* One merged frame: its name, level (root 0), and sample range. */
struct node {
	uint32_t id;
	uint32_t depth;
	uint64_t start;
	uint64_t count;
};

struct node_list {
	struct node *v;
	size_t n, cap;
};

static int push_node(struct node_list *l, uint32_t id, uint32_t depth,
		     uint64_t start)
{
	if (BASE_GROW(l->v, l->cap, l->n + 1, 256) < 0)
		return -ENOMEM;
	l->v[l->n++] = (struct node){ id, depth, start, 0 };
	return 0;
}

/*
 * Merges the sorted stacks into frames, depth-first with the root first
 * (flamegraph.pl's flow()): a stack shares the frames of its common prefix
 * with the previous one and opens new frames at the current sample offset.
 * open[d] is the index of the frame now open at level d.
 */
static int build_nodes(const struct collapse_stack *stacks, size_t nstacks,
		       struct node_list *l)
{
	size_t *open = NULL, open_cap = 0;
	uint64_t x = 0;
	int ret;

	ret = push_node(l, ROOT_ID, 0, 0);
	for (size_t s = 0; !ret && s < nstacks; s++) {
		const struct collapse_stack *st = &stacks[s];
		size_t common = 0;

		if (BASE_GROW(open, open_cap, (size_t)st->n + 1, 128) < 0) {
			ret = -ENOMEM;
			break;
		}
		open[0] = 0;
		if (s) {
			const struct collapse_stack *prev = &stacks[s - 1];

			while (common < prev->n && common < st->n &&
			       prev->ids[common] == st->ids[common])
				common++;
		}
		l->v[0].count += st->count;
		for (size_t d = 0; d < common; d++)
			l->v[open[d + 1]].count += st->count;
		for (size_t d = common; d < st->n; d++) {
			ret = push_node(l, st->ids[d], (uint32_t)(d + 1), x);
			if (ret)
				break;
			open[d + 1] = l->n - 1;
			l->v[l->n - 1].count = st->count;
		}
		x += st->count;
	}
	free(open);
	return ret;
}

/*
 * Writes s as XML character data, escaped first by the rule of every output
 * (collapse_text_escape_char()), cut to max_chars characters with ".." when
 * longer (never inside an escape).
 */
static void put_xml(FILE *out, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), chars = 0, keep, used;
	char esc[COLLAPSE_ESC_MAX];

	for (size_t i = 0; i < len; i += used) {
		size_t e = collapse_text_escape_char(p + i, len - i, &used, esc);

		chars += e ? e : 1;
	}
	keep = chars > max_chars ? max_chars - 2 : chars;
	for (size_t i = 0, c = 0; i < len; i += used) {
		size_t e = collapse_text_escape_char(p + i, len - i, &used, esc);

		if (c + (e ? e : 1) > keep)
			break;
		c += e ? e : 1;
		if (e) {
			fwrite(esc, 1, e, out);
			continue;
		}
		switch (p[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fwrite(p + i, 1, used, out); break;
		}
	}
	if (keep < chars)
		fputs("..", out);
}

/* Writes v with thousands separators: "12,345" (locale-independent). */
static void put_count(FILE *out, uint64_t v)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			putc(',', out);
		putc(digits[i], out);
	}
}

/*
 * Writes v >= 0 with exactly decimals digits after the point. By hand, not
 * with "%f": the command may have called setlocale(), and a decimal comma
 * would make every coordinate invalid.
 */
static void put_fixed(FILE *out, double v, unsigned int decimals)
{
	uint64_t scale = 1, units;

	for (unsigned int i = 0; i < decimals; i++)
		scale *= 10;
	units = (uint64_t)(v * (double)scale + 0.5);
	fprintf(out, "%" PRIu64, units / scale);
	if (decimals)
		fprintf(out, ".%0*" PRIu64, (int)decimals, units % scale);
}

/*
 * The decimals of x such that the rounding error (half a unit of the last
 * digit) stays under a quarter of a sample's width: the script then gets
 * each frame's first sample back exactly with round((x - XPAD) / width per
 * sample), whatever the zoom. One decimal while a sample is wide.
 */
static unsigned int x_decimals(double per_sample)
{
	unsigned int d = 1;
	double unit = 0.1;

	while (d < 12 && unit * 0.5 > per_sample * 0.25) {
		d++;
		unit /= 10;
	}
	return d;
}

/* A stable hash of the name: the same function has the same colour in every
 * graph (FNV-1a, then a murmur3 finalizer to spread the bits).  32-bit:
 * the colours of graphs made before base/ stay what they were. */
static uint32_t name_hash(const char *s)
{
	return base_mix32(base_fnv1a32(s, strlen(s)));
}

/* flamegraph.pl's "hot" palette; names in brackets ([unknown],
 * [libfoo.so]: no symbol) paler, so they stand back. */
static void put_colour(FILE *out, const char *name)
{
	uint32_t h = name_hash(name);
	unsigned int v1 = h & 0xff, v2 = (h >> 8) & 0xff, v3 = (h >> 16) & 0xff;
	unsigned int r = 205 + 50 * v3 / 255, g = 230 * v1 / 255;
	unsigned int b = 55 * v2 / 255;
	size_t len = strlen(name);

	if (len >= 2 && name[0] == '[' && name[len - 1] == ']') {
		r = 255 - (255 - r) * 2 / 5;
		g = 255 - (255 - g) * 2 / 5;
		b = 255 - (255 - b) * 2 / 5;
	}
	fprintf(out, "#%02x%02x%02x", r, g, b);
}

/*
 * The script. ES5 and the plain DOM, so any browser runs it. The C side
 * prepends the layout constants (W, XPAD, FW, HL). Frames are found by
 * event delegation on #frames, not by a handler per frame (smaller file).
 */
static const char svg_script[] =
"var svg,frames,details,matched,unzoombtn,searchbtn,items=[],total=0,"
"wps=1,term=null;\n"
"function init(evt){\n"
" svg=document.documentElement;frames=document.getElementById('frames');\n"
" details=document.getElementById('details').firstChild;\n"
" matched=document.getElementById('matched').firstChild;\n"
" unzoombtn=document.getElementById('unzoom');\n"
" searchbtn=document.getElementById('search');\n"
" var gs=frames.getElementsByTagName('g');\n"
" for(var i=0;i<gs.length;i++)items.push(gs[i].f=parse(gs[i]));\n"
" if(items.length){total=items[0].n;wps=(W-2*XPAD)/total;}\n"
" for(i=0;i<items.length;i++)\n"
"  items[i].s=Math.round((items[i].x0-XPAD)/wps);\n"
" frames.addEventListener('click',function(e){var f=find(e.target);\n"
"  if(f)zoom(f);},false);\n"
" frames.addEventListener('mouseover',function(e){var f=find(e.target);\n"
"  if(f)details.nodeValue='Function: '+f.title;},false);\n"
" frames.addEventListener('mouseout',function(){details.nodeValue=' ';},"
"false);\n"
" unzoombtn.addEventListener('click',unzoom,false);\n"
" searchbtn.addEventListener('click',function(){\n"
"  if(term!==null)search(null);else ask();},false);\n"
" window.addEventListener('keydown',function(e){\n"
"  if(e.keyCode===114||((e.ctrlKey||e.metaKey)&&e.keyCode===70)){\n"
"   e.preventDefault();ask();}\n"
"  else if(e.keyCode===27)search(null);},false);\n"
" var q=/[?&]s=([^&]*)/.exec(document.location.search||'');\n"
" if(q)search(decodeURIComponent(q[1].replace(/\\+/g,' ')));\n"
"}\n"
"function parse(g){\n"
" var t=g.getElementsByTagName('title')[0].firstChild.nodeValue;\n"
" var k=t.lastIndexOf(' (');\n"
" var r=g.getElementsByTagName('rect')[0];\n"
" return {g:g,r:r,t:g.getElementsByTagName('text')[0]||null,title:t,\n"
"  name:t.slice(0,k),n:parseInt(t.slice(k+2).replace(/,/g,''),10),\n"
"  x0:parseFloat(r.getAttribute('x')),y:parseFloat(r.getAttribute('y')),\n"
"  fill:r.getAttribute('fill')};\n"
"}\n"
"function find(e){\n"
" while(e&&e!==frames){if(e.f)return e.f;\n"
"  e=e.parentNode;}\n"
" return null;\n"
"}\n"
"function label(name,w){\n"
" var c=Math.floor(w/FW);if(c<3)return '';\n"
" return name.length>c?name.slice(0,c-2)+'..':name;\n"
"}\n"
"function place(f,x,w,cls){\n"
" f.r.setAttribute('x',x.toFixed(1));f.r.setAttribute('width',w.toFixed(1));\n"
" var l=label(f.name,w);\n"
" if(l&&!f.t){f.t=document.createElementNS('http://www.w3.org/2000/svg',"
"'text');\n"
"  f.t.setAttribute('y',f.y+Math.floor(f.r.getAttribute('height')/2)+4);"
"f.g.appendChild(f.t);}\n"
" if(f.t){f.t.setAttribute('x',(x+3).toFixed(1));f.t.textContent=l;}\n"
" if(cls)f.g.setAttribute('class',cls);else f.g.removeAttribute('class');\n"
"}\n"
"function zoom(z){\n"
" if(z===items[0]){unzoom();return;}\n"
" var r=(W-2*XPAD)/z.n;\n"
" for(var i=0;i<items.length;i++){var f=items[i];\n"
"  if(f.y>z.y&&f.s<=z.s&&f.s+f.n>=z.s+z.n)place(f,XPAD,W-2*XPAD,'parent');\n"
"  else if(f.y<=z.y&&f.s>=z.s&&f.s+f.n<=z.s+z.n)\n"
"   place(f,XPAD+(f.s-z.s)*r,f.n*r,'');\n"
"  else f.g.setAttribute('class','hide');}\n"
" unzoombtn.removeAttribute('class');\n"
"}\n"
"function unzoom(){\n"
" for(var i=0;i<items.length;i++){var f=items[i];\n"
"  place(f,XPAD+f.s*wps,f.n*wps,'');}\n"
" unzoombtn.setAttribute('class','hide');\n"
"}\n"
"function ask(){\n"
" var t=window.prompt('Search for a function (regular expression, "
"e.g. ^malloc|::alloc)',term===null?'':term);\n"
" if(t!==null)search(t);\n"
"}\n"
"function search(t){\n"
" var re=null,m=0,end=-1,hits=0;\n"
" if(t){try{re=new RegExp(t);}catch(e){matched.nodeValue='Bad regex: '+"
"e.message;return;}}\n"
" for(var i=1;i<items.length;i++){var f=items[i];\n"
"  if(re&&re.test(f.name)){f.r.setAttribute('fill',HL);hits++;\n"
"   if(f.s>=end){m+=f.n;end=f.s+f.n;}}\n"
"  else f.r.setAttribute('fill',f.fill);}\n"
" term=re?t:null;\n"
" searchbtn.firstChild.nodeValue=re?'Reset Search':'Search';\n"
" matched.nodeValue=re?'Matched: '+(DROPPED?'at least ':'')+"
"(total?100*m/total:0).toFixed(2)+'% ('+hits+' frames)':' ';\n"
"}\n";

static const char svg_style[] =
"text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
"#title{font-size:17px;text-anchor:middle}\n"
"#subtitle{text-anchor:middle;fill:#606060}\n"
"#unzoom,#search{cursor:pointer;fill:#0000a0}\n"
"#search,#matched{text-anchor:end}\n"
"#frames g{cursor:pointer}\n"
"#frames rect{rx:2px;ry:2px}\n"
"#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
"#frames text{pointer-events:none}\n"
".hide{display:none}\n"
".parent{opacity:0.5}\n";

struct layout {
	const struct collapse *c;
	const struct collapse_svg_options *o;
	uint64_t total;
	double per_sample;	/* pixels */
	unsigned int x_dec;
	unsigned int height;
	unsigned int bottom;	/* y of the root row's lower edge */
	bool dropped;		/* some frames narrower than min_width */
};

static void put_frame(FILE *out, const struct layout *lay,
		      const struct node *nd)
{
	const char *name = nd->id == ROOT_ID ? "all" :
		collapse_frame_name(lay->c, nd->id);
	unsigned int fh = lay->o->frame_height;
	unsigned int y = lay->bottom - (nd->depth + 1) * fh;
	double x = XPAD + (double)nd->start * lay->per_sample;
	double w = (double)nd->count * lay->per_sample;
	double chars = (double)(uint64_t)(w / (FONT_SIZE * FONT_WIDTH));

	fputs("<g><title>", out);
	put_xml(out, name, SIZE_MAX);
	fputs(" (", out);
	put_count(out, nd->count);
	fputs(nd->count == 1 ? " sample, " : " samples, ", out);
	put_fixed(out, (double)nd->count * 100.0 / (double)lay->total, 2);
	fputs("%)</title><rect x=\"", out);
	put_fixed(out, x, lay->x_dec);
	fprintf(out, "\" y=\"%u\" width=\"", y);
	put_fixed(out, w < 0.1 ? 0.1 : w, 1);
	fprintf(out, "\" height=\"%u\" fill=\"", fh > 1 ? fh - 1 : 1);
	put_colour(out, name);
	fputs("\"/>", out);
	/* flamegraph.pl's rule: a label needs room for 3 characters. */
	if (chars >= 3) {
		fputs("<text x=\"", out);
		put_fixed(out, x + 3, 1);
		fprintf(out, "\" y=\"%u\">", y + (fh > 1 ? fh - 1 : 1) / 2 + 4);
		put_xml(out, name, chars > 1e9 ? SIZE_MAX : (size_t)chars);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

static void put_header(FILE *out, const struct layout *lay)
{
	const struct collapse_svg_options *o = lay->o;
	bool sub = o->subtitle && *o->subtitle;
	unsigned int w = o->width, h = lay->height;

	fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n"
	      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
	      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n", out);
	fprintf(out, "<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\" "
		"onload=\"init(evt)\">\n", w, h, w, h);
	fputs("<!-- Flame graph written by " PACKAGE_STRING
	      ". Click a frame to zoom, Ctrl-F to search. -->\n", out);
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n", svg_style);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, "var W=%u,XPAD=%d,FW=", w, XPAD);
	put_fixed(out, FONT_SIZE * FONT_WIDTH, 2);
	fprintf(out, ",HL='" HIGHLIGHT "',DROPPED=%d;\n", lay->dropped);
	fputs(svg_script, out);
	fputs("]]></script>\n", out);
	fputs("<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" "
	      "y2=\"1\"><stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
	      "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient></defs>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		"fill=\"url(#bg)\"/>\n", w, h);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", w / 2);
	put_xml(out, o->title ? o->title : "Flame Graph", SIZE_MAX);
	fputs("</text>\n", out);
	if (sub) {
		fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"%u\">", w / 2,
			24 + YPAD_SUBTITLE);
		put_xml(out, o->subtitle, SIZE_MAX);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">"
		"Reset Zoom</text>\n", XPAD);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\">Search</text>\n",
		w - XPAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		XPAD, h - YPAD_BOTTOM / 2);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n",
		w - XPAD, h - YPAD_BOTTOM / 2);
}

int collapse_write_svg(const struct collapse *c,
		       const struct collapse_svg_options *opts, FILE *out)
{
	struct collapse_svg_options defaults;
	struct node_list nodes = { 0 };
	struct collapse_stack *stacks = NULL;
	struct layout lay = { .c = c };
	uint32_t max_depth = 0;
	double min_samples;
	long nstacks;
	int ret;

	if (!opts) {
		collapse_svg_options_init(&defaults);
		opts = &defaults;
	}
	if (opts->width < 200 || opts->width > 1000000 ||
	    !opts->frame_height || opts->frame_height > 1000 ||
	    !(opts->min_width >= 0 && opts->min_width < 1e9))
		return -EINVAL;
	lay.o = opts;
	lay.total = collapse_total_samples(c);

	nstacks = collapse_sorted_stacks(c, &stacks);
	if (nstacks < 0)
		return (int)nstacks;
	ret = build_nodes(stacks, (size_t)nstacks, &nodes);
	free(stacks);
	if (ret)
		goto out;

	lay.per_sample = lay.total ?
		(double)(opts->width - 2 * XPAD) / (double)lay.total : 0;
	lay.x_dec = x_decimals(lay.per_sample);
	/* A frame is drawn if it is at least min_width wide; frames above a
	 * dropped one are narrower still, so they go too. */
	min_samples = lay.per_sample > 0 ? opts->min_width / lay.per_sample : 0;
	for (size_t i = 0; i < nodes.n; i++) {
		if ((double)nodes.v[i].count < min_samples)
			lay.dropped = true;
		else if (nodes.v[i].depth > max_depth)
			max_depth = nodes.v[i].depth;
	}
	lay.height = YPAD_TOP + (opts->subtitle && *opts->subtitle ?
				 YPAD_SUBTITLE : 0) +
		(max_depth + 1) * opts->frame_height + YPAD_BOTTOM;
	lay.bottom = lay.height - YPAD_BOTTOM;

	errno = 0;
	put_header(out, &lay);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; lay.total && i < nodes.n; i++) {
		if ((double)nodes.v[i].count >= min_samples)
			put_frame(out, &lay, &nodes.v[i]);
	}
	fputs("</g>\n", out);
	if (!lay.total)
		fprintf(out, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">"
			"No samples</text>\n", opts->width / 2,
			lay.bottom - opts->frame_height / 2);
	fputs("</svg>\n", out);
	ret = collapse_flush(out);
out:
	free(nodes.v);
	return ret;
}
