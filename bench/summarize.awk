# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# summarize.awk: medians over repeats, ratios to the baseline and the
# half-bandwidth point N1/2, for bench/run (POSIX awk; mawk is enough).
#
# Input files: first "btl,kind,baseline" lines (in display order), then
# raw.csv (repeat,btl,size,latency_us,bandwidth_MBps). Writes the medians
# to the file named by -v results, N1/2 to -v nhalf, the full table to
# -v table, and the table again to stdout, restricted to the sizes listed
# in -v shown (space-separated) unless that is empty.

# Sorts a[1..n] in place, ascending (insertion sort: a few dozen values).
function isort(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) {
            a[j + 1] = a[j]
        }
        a[j + 1] = t
    }
}

# Median of the numbers a[1..n]; sorts a.
function median(a, n) {
    isort(a, n)
    if (n % 2) {
        return a[(n + 1) / 2]
    }
    return (a[n / 2] + a[n / 2 + 1]) / 2
}

function human(s) {
    if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) "M"
    if (s >= 1024 && s % 1024 == 0) return (s / 1024) "K"
    return s ""
}

function log2(x) {
    return log(x) / log(2)
}

FNR == NR {
    nb++
    btl[nb] = $1
    kind[$1] = $2
    base[$1] = $3
    next
}

FNR == 1 { next }

{
    b = $2; s = $3 + 0
    if (!((b, s) in nlat)) {
        nlat[b, s] = 0
    }
    n = ++nlat[b, s]
    vals["lat", b, s, n] = $4
    vals["bw", b, s, n] = $5
    if (!(s in seen)) {
        seen[s] = 1
        nsz++
        sizes[nsz] = s
    }
}

END {
    isort(sizes, nsz)

    print "btl,size,latency_us,bandwidth_MBps" > results
    for (k = 1; k <= nb; k++) {
        b = btl[k]
        maxbw[b] = 0
        for (i = 1; i <= nsz; i++) {
            s = sizes[i]
            if (!((b, s) in nlat)) {
                continue
            }
            n = nlat[b, s]
            for (r = 1; r <= n; r++) {
                L[r] = vals["lat", b, s, r] + 0
                B[r] = vals["bw", b, s, r] + 0
            }
            lat[b, s] = median(L, n)
            bw[b, s] = median(B, n)
            have[b, s] = 1
            if (bw[b, s] > maxbw[b]) {
                maxbw[b] = bw[b, s]
            }
            printf "%s,%d,%.3f,%.2f\n", b, s, lat[b, s], bw[b, s] > results
        }
    }

    # N1/2: the size where the median bandwidth first reaches half its
    # maximum, interpolated on a log2 scale between the two sizes around it.
    print "btl,kind,baseline,latency_0B_us,max_bandwidth_MBps,n_half_bytes" > nhalf
    for (k = 1; k <= nb; k++) {
        b = btl[k]
        nh[b] = -1
        half = maxbw[b] / 2
        prev = -1
        for (i = 1; i <= nsz && half > 0; i++) {
            s = sizes[i]
            if (!have[b, s]) {
                continue
            }
            if (bw[b, s] >= half) {
                if (prev > 0 && bw[b, s] > bw[b, prev]) {
                    f = (half - bw[b, prev]) / (bw[b, s] - bw[b, prev])
                    nh[b] = int(2 ^ (log2(prev) + f * (log2(s) - log2(prev))) + 0.5)
                } else {
                    nh[b] = s
                }
                break
            }
            prev = s
        }
        l0 = have[b, 0] ? sprintf("%.3f", lat[b, 0]) : ""
        printf "%s,%s,%s,%s,%.2f,%d\n", b, kind[b], base[b], l0, maxbw[b], nh[b] > nhalf
    }

    print_tables(table, "")
    close(table)
    print_tables("/dev/stdout", shown)
}

# The tables: one column per btl; a btl that is not a baseline gets its
# ratio to the baseline of its kind (latency: lower is better, bandwidth:
# higher is better). only: space-separated sizes to show, empty for all.
function print_tables(out, only,    pass, k, b, i, s, v, bb, bv, pick, n, j, w) {
    n = split(only, w, " ")
    for (j = 1; j <= n; j++) {
        pick[w[j] + 0] = 1
    }
    for (pass = 1; pass <= 2; pass++) {
        if (pass == 1) {
            printf "\nLatency (us, half round trip; median of %d runs)\n", repeats > out
        } else {
            printf "\nBandwidth (MB/s = 10^6 B/s, window of 64; median of %d runs)\n", repeats > out
        }
        printf "%8s", "size" > out
        for (k = 1; k <= nb; k++) {
            b = btl[k]
            if (base[b] != b) {
                printf " %12s %8s", b, "/" base[b] > out
            } else {
                printf " %12s", b > out
            }
        }
        printf "\n" > out
        for (i = 1; i <= nsz; i++) {
            s = sizes[i]
            if ((pass == 2 && s == 0) || (n > 0 && !(s in pick))) {
                continue
            }
            printf "%8s", human(s) > out
            for (k = 1; k <= nb; k++) {
                b = btl[k]
                v = pass == 1 ? lat[b, s] : bw[b, s]
                if (!have[b, s]) {
                    printf " %12s", "-" > out
                } else {
                    printf (pass == 1 ? " %12.2f" : " %12.1f"), v > out
                }
                if (base[b] != b) {
                    bb = base[b]
                    bv = pass == 1 ? lat[bb, s] : bw[bb, s]
                    if (have[b, s] && have[bb, s] && bv > 0) {
                        printf " %7.2fx", v / bv > out
                    } else {
                        printf " %8s", "-" > out
                    }
                }
            }
            printf "\n" > out
        }
    }

    printf "\nSummary (N1/2: message size reaching half the maximum bandwidth;\n" > out
    printf "ratios to the baseline over every size, the worst at the size named)\n" > out
    printf "%12s %8s %14s %14s %12s %22s %22s\n", "btl", "kind", "latency 0B us", "max BW MB/s", \
        "N1/2 bytes", "latency ratios", "bandwidth ratios" > out
    for (k = 1; k <= nb; k++) {
        b = btl[k]
        printf "%12s %8s %14s %14.1f %12s %22s %22s\n", b, kind[b], \
            (have[b, 0] ? sprintf("%.2f", lat[b, 0]) : "-"), maxbw[b], \
            (nh[b] >= 0 ? nh[b] : "-"), ratio_range(b, 1), ratio_range(b, 2) > out
    }
}
# "lo-hi (worst at SIZE)" of b's ratios to its baseline over every size
# (pass 1 latency: the worst is the highest; pass 2 bandwidth, from 1 B:
# the lowest); "-" for a baseline.
function ratio_range(b, pass,    bb, i, s, v, bv, r, lo, hi, worst, n) {
    bb = base[b]
    if (bb == b) {
        return "-"
    }
    n = 0
    for (i = 1; i <= nsz; i++) {
        s = sizes[i]
        if (!have[b, s] || !have[bb, s] || (pass == 2 && s == 0)) {
            continue
        }
        v = pass == 1 ? lat[b, s] : bw[b, s]
        bv = pass == 1 ? lat[bb, s] : bw[bb, s]
        if (bv <= 0) {
            continue
        }
        r = v / bv
        if (n++ == 0 || r < lo) {
            lo = r
            if (pass == 2) {
                worst = s
            }
        }
        if (n == 1 || r > hi) {
            hi = r
            if (pass == 1) {
                worst = s
            }
        }
    }
    if (n == 0) {
        return "-"
    }
    return sprintf("%.2f-%.2f (%s)", lo, hi, human(worst))
}
