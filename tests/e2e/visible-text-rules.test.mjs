// The rules of the visible-text check (lib/visible-text.mjs), on sentences of the kind the
// screens showed before they were fixed, and on ones they must let through. No app needed.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { offenders } from './lib/visible-text.mjs'

describe('visible-text rules', () => {
  it('catch ids, protocol lines, raw status and placeholders in either language', () => {
    for (const language of ['en', 'zh-CN']) {
      assert.deepEqual(offenders('1 of 1 GPU processes failed (per_gpu.failed)', language).filter((o) => o.startsWith('code')), [
        'code-like token: per_gpu.failed',
      ])
      assert.ok(offenders('::leasehold::step 2/5 Miniconda', language).includes('protocol line: ::leasehold::'))
      assert.ok(offenders('torch.cpu_build', language).includes('code-like token: torch.cpu_build'))
      assert.ok(offenders('monitor.status.live', language).includes('code-like token: monitor.status.live'))
      assert.ok(offenders('gpu=unreadable cpu=first', language).includes('raw status: gpu=unreadable'))
      assert.ok(offenders('Paid {amount} so far', language).includes('unfilled placeholder: {amount}'))
      assert.ok(offenders('state: power_off_failed', language).includes('code-like token: power_off_failed'))
    }
  })

  it('catch job ids, machine timestamps, key=value, backticks, missing figures and bare currency codes', () => {
    for (const language of ['en', 'zh-CN']) {
      assert.ok(offenders('Job j-20261204-143040-b3316c finished', language).includes('job id: j-20261204-143040-b3316c'))
      assert.ok(offenders('since 2026-12-04T14:30:40Z', language).includes('ISO timestamp: 2026-12-04T14:30:40Z'))
      assert.ok(offenders('state=running', language).includes('key=value: state=running'))
      assert.ok(offenders('run `nvidia-smi` first', language).includes('backticks: `nvidia-smi`'))
      assert.ok(offenders('PyTorch allocated ? GiB', language).includes('missing figure: ? GiB'))
      assert.ok(offenders('¥? so far', language).includes('missing figure: ¥?'))
    }
    // A currency code alone on a line of a Chinese screen (a label, a field's unit), wherever
    // the line is among the screen's lines.
    assert.ok(offenders('CNY', 'zh-CN').includes('bare currency code: CNY'))
    assert.ok(offenders('预算\n100\nCNY\n下一步', 'zh-CN').includes('bare currency code: CNY'))
    assert.deepEqual(offenders('Budget\nCNY', 'en').filter((o) => o.startsWith('bare')), [])
    // A keyword argument people type, a currency inside a sentence and a dated day are fine.
    assert.deepEqual(offenders('Load with low_cpu_mem_usage=True; prices in CNY; on 2026-12-04', 'en'), [])
  })

  it('let file names, addresses, versions and model names through', () => {
    const fine = 'Saved to ~/outputs/train_lora.py on mirrors.aliyun.com with CUDA 12.4, Qwen2.5-7B and torch 2.5.1'
    assert.deepEqual(offenders(fine, 'en'), [])
  })

  it('in Chinese, catch English words left in a sentence and ASCII question marks', () => {
    assert.deepEqual(offenders('GPU 空闲 · idle', 'zh-CN'), ['English in Chinese: idle'])
    assert.deepEqual(offenders('预算：? 元', 'zh-CN'), ['missing figure: ? 元', 'ASCII question mark: 预算：? '])
    assert.deepEqual(offenders('RTX 4090 每卡每小时 ¥2.50，CUDA 12.4，用 SSH 连接 AutoDL', 'zh-CN'), [])
    assert.deepEqual(offenders('在 A100 上运行 vLLM 与 nvidia-smi', 'zh-CN'), [])
    assert.deepEqual(offenders('就报 “no kernel image is available”，torch.cuda.is_available() 为 False', 'zh-CN'), [])
  })

  it('in English, catch Chinese left on screen but not the product’s Chinese name', () => {
    assert.deepEqual(offenders('Leasehold · 算力租用管家', 'en'), [])
    assert.deepEqual(offenders('Stopped 已关机', 'en'), ['Chinese in English: 已关机'])
  })
})
