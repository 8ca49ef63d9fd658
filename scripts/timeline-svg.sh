#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# timeline-svg.sh TRACE.json [WIDTH] > picture.svg
#
# Draws a timeline that vgpu-run --timeline wrote (one event per line, as
# libvgpu writes them; not a general JSON reader) the way a trace viewer
# shows it: a row per warp and per copy engine, grouped by CTA; "run"
# slices blue, barrier waits orange, mbarrier waits red, copies green;
# release flows as arrows from the arrive that completed a phase to the
# warp it released.  docs/tools.md's picture is made with it; for real
# work open the JSON in ui.perfetto.dev or chrome://tracing.
set -euo pipefail

[[ $# -ge 1 && -r $1 ]] || { echo "usage: $0 TRACE.json [WIDTH]" >&2; exit 2; }
width=${2:-1400}

awk -v W="$width" '
function num(key,   i, s) {
	i = index($0, "\"" key "\":")
	if (!i) return -1
	s = substr($0, i + length(key) + 3)
	return s + 0
}
function str(key,   i, s, j) {
	i = index($0, "\"" key "\":\"")
	if (!i) return ""
	s = substr($0, i + length(key) + 4)
	j = index(s, "\"")
	return substr(s, 1, j - 1)
}
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); return s }
/^\{"ph":/ {
	ph = str("ph"); pid = num("pid"); tid = num("tid")
	if (ph == "M") {
		if (str("name") == "process_name") {
			n = $0; sub(/.*"args":\{"name":"/, "", n); sub(/".*/, "", n); pname[pid] = n
		} else if (str("name") == "thread_name") {
			n = $0; sub(/.*"args":\{"name":"/, "", n); sub(/".*/, "", n); tname[pid, tid] = n
		}
		next
	}
	ts = num("ts"); key = pid SUBSEP tid
	if (!(key in row)) { rows[++nrows] = key; row[key] = 1 }
	if (ts > tmax) tmax = ts
	n_ev++
	evph[n_ev] = ph; evkey[n_ev] = key; evts[n_ev] = ts
	evdur[n_ev] = num("dur"); evname[n_ev] = str("name"); evcat[n_ev] = str("cat")
	evid[n_ev] = ph == "b" || ph == "e" ? str("id") : num("id")
	if (ph == "X" && ts + evdur[n_ev] > tmax) tmax = ts + evdur[n_ev]
}
END {
	# rows in (pid, tid) order
	for (i = 1; i <= nrows; i++) for (j = i + 1; j <= nrows; j++) {
		split(rows[i], a, SUBSEP); split(rows[j], b, SUBSEP)
		if (a[1] + 0 > b[1] + 0 || (a[1] == b[1] && a[2] + 0 > b[2] + 0)) { t = rows[i]; rows[i] = rows[j]; rows[j] = t }
	}
	L = 230; top = 40; rh = 24; X0 = L; span = W - L - 20
	if (tmax <= 0) tmax = 1
	y = top; last = ""
	for (i = 1; i <= nrows; i++) {
		split(rows[i], a, SUBSEP)
		if (a[1] != last) { y += 10; hdr[i] = y; y += 18; last = a[1] }
		ry[rows[i]] = y; y += rh
	}
	H = y + 30
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", W, H
	printf "<defs><marker id=\"ah\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#222\"/></marker></defs>\n"
	printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	# time axis
	step = 1; while (tmax / step > 12) step *= (step ~ /^1/ ? 2 : (step ~ /^2/ ? 2.5 : 2))
	for (t = 0; t <= tmax; t += step) {
		x = X0 + t / tmax * span
		printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, top - 8, x, H - 30
		printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%g</text>\n", x, top - 12, t
	}
	printf "<text x=\"%d\" y=\"%d\" fill=\"#555\">SM cycles</text>\n", 10, top - 12
	for (i = 1; i <= nrows; i++) {
		split(rows[i], a, SUBSEP)
		if (i in hdr) printf "<text x=\"6\" y=\"%d\" font-weight=\"bold\">%s</text>\n", hdr[i] + 12, esc(pname[a[1]])
		printf "<text x=\"18\" y=\"%d\">%s</text>\n", ry[rows[i]] + 15, esc(tname[a[1], a[2]])
		printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n", L, ry[rows[i]] + rh - 2, W - 20, ry[rows[i]] + rh - 2
	}
	for (e = 1; e <= n_ev; e++) {
		x = X0 + evts[e] / tmax * span; yy = ry[evkey[e]]
		if (evph[e] == "X") {
			w = evdur[e] / tmax * span; if (w < 1) w = 1
			c = evcat[e] == "run" ? "#4c8fe0" : evcat[e] == "copy" ? "#3aa35b" : evname[e] ~ /^mbarrier/ ? "#e0584c" : "#f0a040"
			printf "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n", x, yy + 3, w, rh - 8, c, esc(evname[e])
			if (w > 7 * length(evname[e]) && evcat[e] != "run")
				printf "<text x=\"%.1f\" y=\"%d\" fill=\"white\">%s</text>\n", x + 3, yy + 15, esc(evname[e])
		} else if (evph[e] == "b") {
			open[evid[e]] = e
		} else if (evph[e] == "e" && (evid[e] in open)) {
			s = open[evid[e]]; xs = X0 + evts[s] / tmax * span
			printf "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#8fd19e\" stroke=\"#3aa35b\"><title>%s</title></rect>\n", xs, yy + 6, x - xs, rh - 14, esc(evname[s])
		} else if (evph[e] == "s") {
			fs[evid[e]] = e
		} else if (evph[e] == "f" && (evid[e] in fs)) {
			s = fs[evid[e]]; xs = X0 + evts[s] / tmax * span; ys = ry[evkey[s]] + rh / 2
			printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" stroke-width=\"1\" marker-end=\"url(#ah)\" opacity=\"0.7\"/>\n", xs, ys, x, yy + rh / 2
		}
	}
	printf "<text x=\"%d\" y=\"%d\" fill=\"#333\">blue: running   orange: waiting at a named barrier   red: waiting on an mbarrier   green: copies   arrows: the arrive that completed a phase, to the warps it released</text>\n", L, H - 10
	print "</svg>"
}' "$1"
