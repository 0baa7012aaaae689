torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \
  --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention \
  --num-query-groups 8 --seq-length 8192 --max-position-embeddings 8192 --position-embedding-type rope \
  --rotary-base 500000 --normalization RMSNorm --norm-epsilon 1e-05 --swiglu --untie-embeddings-and-output-weights \
  --disable-bias-linear --attention-dropout 0 --hidden-dropout 0 --bf16 --micro-batch-size 1 --global-batch-size 64 \
  --pipeline-model-parallel-layout "Et*8|t*8|t*8|t*8L" --recompute-granularity full --recompute-method block \
  --recompute-num-layers 2 --context-parallel-size 1 --cp-comm-type all_gather --data-path /data/x --save ckpt
