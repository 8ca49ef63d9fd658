// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the real scheduler (vgpu_job.c includes this file after
 * vgpu_job_test.c, whose helpers it shares).
 */

/*
 * vgpu_sched_init() on a fake device (a KUnit device for DMA, registers in
 * memory), an open file's entities from vgpu_file_sched_init(), jobs pushed
 * the way vgpu_submit() pushes them, completed by writing their records and
 * the completed counter as the device does, and torn down the way
 * vgpu_remove() does.  One queue.
 */
struct vgpu_sched_test {
	struct vgpu_device *vdev;
	struct vgpu_file *vf;
	struct vgpu_queue *q;
	u64 dma_mask;
	bool mmu_up, sched_up;
};

static int vgpu_sched_test_init(struct kunit *test)
{
	struct vgpu_sched_test *t = vgpu_test_new(test, struct vgpu_sched_test);
	struct vgpu_device *vdev;
	struct device *dev;
	unsigned int timeout_ms = vgpu_timeout_ms;
	u8 *bar;
	int ret;

	test->priv = t;
	dev = kunit_device_register(test, "vgpu-sched-test");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	t->dma_mask = DMA_BIT_MASK(52);
	dev->dma_mask = &t->dma_mask;
	dev->coherent_dma_mask = DMA_BIT_MASK(52);
	bar = kunit_kzalloc(test, VGPU_BAR0_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bar);
	vdev = t->vdev = vgpu_test_new(test, struct vgpu_device);
	vdev->drm.dev = dev;
	vdev->mmio = (void __force __iomem *)bar;
	vdev->nqueues = 1;
	vdev->as_max = 4;
	mutex_init(&vdev->reset_lock);
	mutex_init(&vdev->files_lock);
	spin_lock_init(&vdev->exc_lock);
	spin_lock_init(&vdev->irq_lock);
	INIT_LIST_HEAD(&vdev->files);
	t->q = &vdev->queues[0];

	KUNIT_ASSERT_EQ(test, vgpu_mmu_init(vdev), 0);
	t->mmu_up = true;
	/* No timeout handler may run: nothing here hangs, it waits for the test. */
	vgpu_timeout_ms = 3600 * 1000;
	ret = vgpu_sched_init(vdev);
	vgpu_timeout_ms = timeout_ms;
	KUNIT_ASSERT_EQ(test, ret, 0);
	t->sched_up = true;

	/* as vgpu_open() */
	t->vf = kzalloc(sizeof(*t->vf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vf);
	t->vf->vdev = vdev;
	kref_init(&t->vf->refcount);
	init_waitqueue_head(&t->vf->jobs_wq);
	spin_lock_init(&t->vf->hist_lock);
	t->vf->client_id = 7;
	vgpu_file_vms_init(t->vf);
	KUNIT_ASSERT_EQ(test, vgpu_hist_alloc(t->vf), 0);
	t->vf->as = vgpu_as_create(vdev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->vf->as);
	KUNIT_ASSERT_EQ(test, vgpu_file_sched_init(vdev, t->vf), 0);
	mutex_lock(&vdev->files_lock);
	list_add_tail(&t->vf->link, &vdev->files);
	mutex_unlock(&vdev->files_lock);
	return 0;
}

/* Until only the test holds @vf: every job has been freed. */
static bool vgpu_sched_test_jobs_freed(struct vgpu_sched_test *t)
{
	int i;

	for (i = 0; i < 2000 && kref_read(&t->vf->refcount) > 1; i++)
		msleep(10);
	return kref_read(&t->vf->refcount) == 1;
}

static void vgpu_sched_test_exit(struct kunit *test)
{
	struct vgpu_sched_test *t = test->priv;
	struct vgpu_device *vdev = t ? t->vdev : NULL;
	bool freed = true;

	if (!vdev)
		return;
	if (t->sched_up) {
		/* as vgpu_remove(): what is left fails, the entities go */
		vgpu_jobs_fail_all(vdev, -ENODEV);
		vgpu_files_sched_fini(vdev);
		vgpu_sched_fini(vdev);
	}
	if (t->vf) {
		freed = vgpu_sched_test_jobs_freed(t);
		if (!IS_ERR_OR_NULL(t->vf->as))
			vgpu_as_put(t->vf->as);
		vgpu_file_queues_free(t->vf);
		vgpu_file_put(t->vf);
	}
	/* a job still alive would put its AS into a freed table: leak instead */
	if (t->mmu_up && freed)
		vgpu_mmu_fini(vdev);
}

/* Queue a job on queue 0 as vgpu_submit() does; its finished fence. */
static struct dma_fence *vgpu_sched_test_push(struct kunit *test,
					      struct vgpu_sched_test *t)
{
	struct vgpu_file *vf = t->vf;
	struct vgpu_job_result *r;
	struct dma_fence *done;
	struct vgpu_job *job;
	unsigned long flags;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, job);
	job->vdev = t->vdev;
	job->queue = 0;
	job->launch = (struct drm_vgpu_launch){
		.code_va = VGPU_VA_START, .code_size = 16,
		.grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
	};
	INIT_LIST_HEAD(&job->link);
	job->xq = vgpu_xqueue_lookup(vf, VGPU_QUEUE_DEFAULT);
	KUNIT_ASSERT_NOT_NULL(test, job->xq);
	KUNIT_ASSERT_EQ(test, drm_sched_job_init(&job->base, &job->xq->entity,
						 VGPU_JOB_CREDITS, vf, vf->client_id), 0);
	kref_get(&vf->refcount);
	job->vf = vf;
	job->as = vgpu_as_get(vf->as);
	job->id = atomic64_inc_return(&vf->next_job_id);
	spin_lock_irqsave(&vf->hist_lock, flags);
	r = vgpu_hist(vf, job->id);
	memset(r, 0, sizeof(*r));
	r->id = job->id;
	r->state = VGPU_JOB_QUEUED;
	spin_unlock_irqrestore(&vf->hist_lock, flags);
	drm_sched_job_arm(&job->base);
	done = dma_fence_get(&job->base.s_fence->finished);
	vgpu_job_count(job, done);
	drm_sched_entity_push_job(&job->base);
	return done;
}

static u32 vgpu_sched_test_inflight(struct vgpu_queue *q)
{
	struct vgpu_job *job;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry(job, &q->inflight, link)
		n++;
	spin_unlock_irqrestore(&q->lock, flags);
	return n;
}

/* Until @want jobs are on the hardware (or 20 s); how many are. */
static u32 vgpu_sched_test_wait_inflight(struct vgpu_queue *q, u32 want)
{
	u32 n = 0;
	int i;

	for (i = 0; i < 2000; i++) {
		n = vgpu_sched_test_inflight(q);
		if (n >= want)
			break;
		msleep(10);
	}
	return n;
}

/*
 * The device completes the first @max jobs on the hardware (in ring
 * order), job @fail_id with an exception.  Checks what the ring holds on
 * the way: each job in the slot its sequence number names, and the newest
 * command less than a ring ahead of the oldest one not completed.
 */
static u32 vgpu_sched_test_complete(struct kunit *test, struct vgpu_sched_test *t,
				    u32 max, u64 fail_id)
{
	struct vgpu_queue *q = t->q;
	u32 *slots = kunit_kcalloc(test, VGPU_RING_ENTRIES, sizeof(u32), GFP_KERNEL);
	u64 *seqs = kunit_kcalloc(test, VGPU_RING_ENTRIES, sizeof(u64), GFP_KERNEL);
	struct vgpu_job *job;
	unsigned long flags;
	u64 emitted;
	u32 n = 0, i;

	KUNIT_ASSERT_NOT_NULL(test, slots);
	KUNIT_ASSERT_NOT_NULL(test, seqs);
	spin_lock_irqsave(&q->lock, flags);
	emitted = q->emitted;
	list_for_each_entry(job, &q->inflight, link) {
		struct vgpu_completion *cpl = &q->cpl[job->slot];

		if (n == max || n == VGPU_RING_ENTRIES)
			break;
		memset(cpl, 0, sizeof(*cpl));
		cpl->seq = cpu_to_le64(job->seq);
		cpl->warp_insns = cpu_to_le64(job->id);
		if (job->id == fail_id) {
			cpl->status = cpu_to_le32(VGPU_ERR_EXCEPTION);
			cpl->exc.code = cpu_to_le32(VGPU_EXC_DEADLOCK);
		}
		slots[n] = job->slot;
		seqs[n++] = job->seq;
	}
	spin_unlock_irqrestore(&q->lock, flags);

	KUNIT_EXPECT_LE(test, n, VGPU_JOBS_IN_FLIGHT);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, slots[i], (seqs[i] - 1) % VGPU_RING_ENTRIES);
		if (i)
			KUNIT_EXPECT_GT(test, seqs[i], seqs[i - 1]);
	}
	if (n) {
		KUNIT_EXPECT_LT(test, emitted - (seqs[0] - 1), VGPU_RING_ENTRIES);
		writel(lower_32_bits(seqs[n - 1]),
		       t->vdev->mmio + VGPU_REG_QUEUE(0) + VGPU_Q_COMPLETED_LO);
		vgpu_queue_process(q, true);
	}
	return n;
}

static void vgpu_sched_put_fences(struct dma_fence **f, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		dma_fence_put(f[i]);
}

/*
 * At most VGPU_JOBS_IN_FLIGHT jobs of a queue are on the hardware; each
 * completion lets one more through.
 */
static void vgpu_sched_credits(struct kunit *test)
{
	const u32 jobs = VGPU_JOBS_IN_FLIGHT + 36;
	struct vgpu_sched_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct dma_fence **done = kunit_kcalloc(test, jobs, sizeof(*done), GFP_KERNEL);
	u32 i, n, left;

	KUNIT_ASSERT_NOT_NULL(test, done);
	KUNIT_EXPECT_EQ(test, q->sched.credit_limit,
			VGPU_JOBS_IN_FLIGHT * VGPU_JOB_CREDITS);
	for (i = 0; i < jobs; i++)
		done[i] = vgpu_sched_test_push(test, t);

	KUNIT_EXPECT_EQ(test, vgpu_sched_test_wait_inflight(q, VGPU_JOBS_IN_FLIGHT),
			VGPU_JOBS_IN_FLIGHT);
	msleep(200);	/* and no more come */
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_inflight(q), VGPU_JOBS_IN_FLIGHT);
	/* the first launch after the queue's set-up flushes the TLB */
	KUNIT_EXPECT_EQ(test, q->emitted, VGPU_JOBS_IN_FLIGHT + 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_cmd_opcode(q, 0), VGPU_CMD_TLB_INVALIDATE);
	KUNIT_EXPECT_EQ(test, vgpu_test_cmd_opcode(q, 1), VGPU_CMD_LAUNCH);
	KUNIT_EXPECT_EQ(test, readl(t->vdev->mmio + VGPU_REG_QUEUE(0) + VGPU_Q_DOORBELL),
			q->tail);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 1)->state, VGPU_JOB_RUNNING);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->state, VGPU_JOB_QUEUED);

	/* ten complete: ten more go */
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_complete(test, t, 10, 0), 10);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_wait_inflight(q, VGPU_JOBS_IN_FLIGHT),
			VGPU_JOBS_IN_FLIGHT);
	msleep(200);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_inflight(q), VGPU_JOBS_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, q->emitted, VGPU_JOBS_IN_FLIGHT + 11);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(done[10]));

	/* the rest */
	for (left = jobs - 10; left; left -= n) {
		n = vgpu_sched_test_wait_inflight(q, min(left, VGPU_JOBS_IN_FLIGHT));
		KUNIT_ASSERT_EQ(test, n, min(left, VGPU_JOBS_IN_FLIGHT));
		KUNIT_ASSERT_EQ(test, vgpu_sched_test_complete(test, t, ~0u, 0), n);
	}
	for (i = 0; i < jobs; i++) {
		KUNIT_EXPECT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
		KUNIT_EXPECT_EQ(test, done[i]->error, 0);
	}
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->state, VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->warp_insns, jobs);
	KUNIT_EXPECT_EQ(test, q->jobs_done, jobs);
	/* every job freed: its file, AS and device references dropped */
	KUNIT_EXPECT_TRUE(test, vgpu_sched_test_jobs_freed(t));
	KUNIT_EXPECT_EQ(test, kref_read(&t->vf->as->refcount), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vf->as->active), 0);
	vgpu_sched_put_fences(done, jobs);
}

/*
 * Many more jobs than ring slots: the ring wraps several times, never
 * overwriting a command not completed; one failed job's fence carries
 * -EIO, the others none.
 */
static void vgpu_sched_ring_wraps(struct kunit *test)
{
	/* the failed job among the last VGPU_JOB_HISTORY: GET_JOB knows it */
	const u32 jobs = 3 * VGPU_RING_ENTRIES + 17, fail = jobs - 50;
	struct vgpu_sched_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct dma_fence **done = kunit_kcalloc(test, jobs, sizeof(*done), GFP_KERNEL);
	u32 i, n, left, rounds = 0;

	KUNIT_ASSERT_NOT_NULL(test, done);
	for (i = 0; i < jobs; i++)
		done[i] = vgpu_sched_test_push(test, t);
	for (left = jobs; left; left -= n, rounds++) {
		/* a mapping goes away now and then: a flush joins the ring */
		if (rounds % 3 == 1)
			atomic_inc(&t->vdev->mmu_gen);
		n = vgpu_sched_test_wait_inflight(q, min(left, VGPU_JOBS_IN_FLIGHT));
		KUNIT_ASSERT_EQ(test, n, min(left, VGPU_JOBS_IN_FLIGHT));
		/* in uneven bites, so that the ring's end falls anywhere */
		n = vgpu_sched_test_complete(test, t, 13 + rounds % 40, fail);
		KUNIT_ASSERT_GT(test, n, 0);
	}
	KUNIT_EXPECT_GT(test, q->emitted, 3 * VGPU_RING_ENTRIES);
	for (i = 0; i < jobs; i++) {
		KUNIT_ASSERT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
		KUNIT_EXPECT_EQ_MSG(test, done[i]->error, i + 1 == fail ? -EIO : 0, "job %u", i + 1);
	}
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, fail)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, fail)->error, EIO);
	KUNIT_EXPECT_EQ(test, q->jobs_failed, 1);
	KUNIT_EXPECT_EQ(test, q->jobs_done, jobs - 1);
	KUNIT_EXPECT_TRUE(test, vgpu_sched_test_jobs_freed(t));
	vgpu_sched_put_fences(done, jobs);
}

/* Removal with jobs queued and on the hardware: every fence signals. */
static void vgpu_sched_remove_under_load(struct kunit *test)
{
	const u32 jobs = VGPU_JOBS_IN_FLIGHT + 8;
	struct vgpu_sched_test *t = test->priv;
	struct dma_fence **done = kunit_kcalloc(test, jobs, sizeof(*done), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, done);
	for (i = 0; i < jobs; i++)
		done[i] = vgpu_sched_test_push(test, t);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_wait_inflight(t->q, VGPU_JOBS_IN_FLIGHT),
			VGPU_JOBS_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_complete(test, t, 1, 0), 1);
	/* as vgpu_remove() */
	vgpu_jobs_fail_all(t->vdev, -ENODEV);
	vgpu_files_sched_fini(t->vdev);
	vgpu_sched_fini(t->vdev);
	t->sched_up = false;
	KUNIT_EXPECT_EQ(test, done[0]->error, 0);
	for (i = 0; i < jobs; i++)
		KUNIT_EXPECT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
	/* on the hardware: -ENODEV; never run: killed with the entity */
	KUNIT_EXPECT_EQ(test, done[1]->error, -ENODEV);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->error, ENODEV);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->hw_status, VGPU_ERR_ABORTED);
	KUNIT_EXPECT_LT(test, done[jobs - 1]->error, 0);
	/* a killed job is recorded when it is freed */
	KUNIT_EXPECT_TRUE(test, vgpu_sched_test_jobs_freed(t));
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->hw_status, VGPU_ERR_ABORTED);
	vgpu_sched_put_fences(done, jobs);
}

static struct kunit_case vgpu_sched_cases[] = {
	KUNIT_CASE_SLOW(vgpu_sched_credits),
	KUNIT_CASE_SLOW(vgpu_sched_ring_wraps),
	KUNIT_CASE_SLOW(vgpu_sched_remove_under_load),
	{}
};

static struct kunit_suite vgpu_sched_suite = {
	.name = "vgpu_sched",
	.init = vgpu_sched_test_init,
	.exit = vgpu_sched_test_exit,
	.test_cases = vgpu_sched_cases,
};

kunit_test_suite(vgpu_sched_suite);
