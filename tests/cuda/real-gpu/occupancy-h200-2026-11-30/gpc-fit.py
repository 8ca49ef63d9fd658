#!/usr/bin/env python3
# The GPC layout behind the H200's cuOccupancyMaxActiveClusters
# (occupancy2.h200.log, Z lines of the non-portable kernel): every layout
# of 8 GPCs of 3 to 18 SMs, the rest of the 132 SMs in pairs (TPCs), under
# the rule "clusters of more than 2 CTAs on distinct SMs of one GPC, at
# most c CTAs of a cluster launch an SM".  Prints the layouts that give
# every count; one does: (8, 16, 16, 16, 16, 16, 18, 18), VGPU_H100_GPC_SMS.
import itertools, os

log = os.path.join(os.path.dirname(__file__), "occupancy2.h200.log")
data = {}
for line in open(log):
    v = line.split()
    if len(v) == 13 and v[0] == "Z" and v[1] == "1" and int(v[4]) > 0:
        c = int(v[4]) // 132  # clusters of 1: 132 x the CTAs an SM holds
        for k, n in zip((1, 2, 3, 4, 8, 16), v[4:10]):
            data[(c, k)] = int(n)

def count(layout, c, k):
    return sum(s * c // k for s in layout if s >= k or k <= 2)

for gpcs in itertools.combinations_with_replacement(range(3, 19), 8):
    rest = 132 - sum(gpcs)
    if rest < 0 or rest % 2:
        continue
    layout = gpcs + (2,) * (rest // 2)
    if all(count(layout, c, k) == n for (c, k), n in data.items()):
        print(gpcs, "and", rest // 2, "TPCs;", len(data), "counts")
