import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as banks from "../src/banks.js";
import { MemoryPoolError } from "../src/index.js";

const { onlineC128BankLayout, onlineC128BankOffsetRows, onlineC128BankStrideRows } = banks;
const { onlineC128StateRow, onlineC128TotalRows } = banks;

describe("online c128 MTP banks (pools-and-sizing §5.3, §6, §8.4)", () => {
  it("mrr 256 → slots 257: 259 rows without MTP, 1,295 rows with 4 banks (pools-and-sizing §8.4)", () => {
    expect(onlineC128BankStrideRows(257)).toBe(259);
    expect(onlineC128TotalRows(257, 0)).toBe(259);
    expect(onlineC128TotalRows(257, 4)).toBe(1295);
  });

  it("bytes match pools-and-sizing §8.4 for 20 c128 layers (fp32, A = 512)", () => {
    expect(onlineC128BankLayout({ statePoolSize: 257, maxDraftTokens: 0 }).bytesPerLayer * 20).toBe(31_825_920);
    const layout = onlineC128BankLayout({ statePoolSize: 257, maxDraftTokens: 4 });
    expect(layout.bytesPerLayer * 20).toBe(159_129_600);
    expect(layout.rowBytes).toBe(6144);
    expect(layout.bankOffsetRows).toEqual([0, 259, 518, 777, 1036]);
  });

  it("request q in bank k is at k·stride + q; bank 0 is the request row", () => {
    expect(onlineC128StateRow(5, 0, 257, 4)).toBe(5);
    expect(onlineC128StateRow(5, 3, 257, 4)).toBe(3 * 259 + 5);
    expect(onlineC128BankOffsetRows(4, 257, 4)).toBe(1036);
  });

  it("rejects a bank beyond maxDraftTokens and a request beyond the slots with a typed error", () => {
    expect(() => onlineC128StateRow(0, 5, 257, 4)).toThrow(MemoryPoolError);
    expect(() => onlineC128StateRow(0, 5, 257, 4)).toThrow(/bank = 5/);
    expect(() => onlineC128StateRow(257, 0, 257, 4)).toThrow(/reqIdx = 257/);
    expect(() => onlineC128BankStrideRows(-1)).toThrow(/statePoolSize = -1/);
  });

  it("property: rows of distinct (request, bank) pairs are distinct and inside the tensor", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 0, max: 12 }), (slots, banks) => {
        const total = onlineC128TotalRows(slots, banks);
        const seen = new Set<number>();
        for (let k = 0; k <= banks; k++) {
          for (const q of [0, slots - 1]) {
            const row = onlineC128StateRow(q, k, slots, banks);
            expect(row).toBeGreaterThanOrEqual(0);
            expect(row).toBeLessThan(total);
            seen.add(row);
          }
        }
        expect(seen.size).toBe((banks + 1) * (slots === 1 ? 1 : 2));
      }),
    );
  });
});
