"""Launch-spec element types: gfx950's OCP E4M3 (`float8_e4m3fn`) against values derived by hand from the OCP MX
specification 1.0 (E4M3: bias 7, no infinities, NaN S.1111.111, max normal 1.75 * 2^8 = 448, subnormals m/8 * 2^-6)."""
import numpy as np

from asmevo.device.dtypes import get_dtype

E4M3FN = get_dtype("float8_e4m3fn")
# code -> value, by hand: 0x38 is exponent 7 (2^0), 0x08 the smallest normal 2^-6, 0x01 the smallest subnormal
# 2^-9, 0x07 the largest subnormal 7/8 * 2^-6, 0x7E exponent 15 mantissa 6 (1.75 * 2^8), 0x80 negative zero
CODES = {0x00: 0.0, 0x01: 2.0 ** -9, 0x07: 7 / 8 * 2.0 ** -6, 0x08: 2.0 ** -6, 0x38: 1.0, 0x3C: 1.5, 0x40: 2.0,
         0x7E: 448.0, 0x80: -0.0, 0xB8: -1.0, 0xFE: -448.0}


def test_ocp_e4m3_decodes_as_the_ocp_specification():
    got = E4M3FN.decode(np.array(list(CODES), np.uint8))
    assert got.tolist() == list(CODES.values())
    assert np.signbit(got[list(CODES).index(0x80)])
    assert np.isnan(E4M3FN.decode(np.array([0x7F, 0xFF], np.uint8))).all()


def test_ocp_e4m3_encodes_to_nearest_even_and_saturates():
    assert E4M3FN.encode(np.array(list(CODES.values()))).tolist()[:8] == list(CODES)[:8]
    # 1 + 1/16 is a tie between 0x38 (even) and 0x39; 1 + 3/16 one between 0x39 and 0x3A (even)
    assert E4M3FN.encode([1 + 1 / 16, 1 + 3 / 16, 464.0, 1e9, -1e9, np.nan]).tolist() == [0x38, 0x3A, 0x7E, 0x7E, 0xFE,
                                                                                        0x7F]
    finite = np.array([c for c in range(256) if c & 0x7F != 0x7F], np.uint8)
    values = E4M3FN.decode(finite)
    assert (E4M3FN.encode(values)[values != 0] == finite[values != 0]).all()
