// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of an image: which pages of the task's mappings open() pins
 * (dump_vma_pages(), dump_shmem_pages()), and how read() and the ioctls
 * (IMGCR_IOC_DUMP_TO, IMGCR_IOC_PRECOPY) hand them out.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/shmem_fs.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <uapi/linux/imgcr.h>

#include "compat.h"
#include "dump.h"
#include "img_dump.h"

/*
 * Make the last run end at @addr, where the next page of the image goes:
 * extend it, or start a new one.
 */
static int dump_run_at(struct dump_image *img, unsigned long addr)
{
	struct dump_run *last = img->nr_runs ? &img->runs[img->nr_runs - 1] : NULL;
	int ret;

	if (last && !img->new_run &&
	    last->vaddr + last->npages * PAGE_SIZE == addr)
		return 0;
	if (img->nr_runs + 1 >= IMGCR_MAX_PHDRS) {
		dump_refuse(img, task_pid_nr(img->task),
			    "memory too fragmented (more than %d runs of pages)",
			    IMGCR_MAX_PHDRS - 1);
		return -EFBIG;
	}
	ret = grow((void **)&img->runs, &img->cap_runs, img->nr_runs + 1,
		   sizeof(*img->runs));
	if (ret)
		return ret;
	last = &img->runs[img->nr_runs++];
	last->vaddr = addr;
	last->first = img->nr_pages;
	last->npages = 0;
	last->anon = img->run_anon;
	img->new_run = false;
	return 0;
}

/* Append a page at @addr to the image, extending the last run if it can. */
static int add_page(struct dump_image *img, unsigned long addr,
		    struct page *page)
{
	int ret;

	ret = grow((void **)&img->pages, &img->cap_pages, img->nr_pages + 1,
		   sizeof(*img->pages));
	if (!ret)
		ret = dump_run_at(img, addr);
	if (ret)
		return ret;
	img->pages[img->nr_pages++] = page;
	img->runs[img->nr_runs - 1].npages++;
	return 0;
}

static bool page_is_zero(struct page *page)
{
	void *kaddr = kmap_local_page(page);
	bool zero = !memchr_inv(kaddr, 0, PAGE_SIZE);

	kunmap_local(kaddr);
	return zero;
}

/*
 * The position in the file of @addr of a hugetlb mapping (6.1's
 * linear_page_index() gives hugetlb mappings a huge page index).
 */
static loff_t hugetlb_file_pos(struct vm_area_struct *vma, unsigned long addr)
{
	return ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (addr - vma->vm_start);
}

/* A huge page all zeros (a whole folio of 2 MiB: 512 pages to look at). */
static bool folio_is_zero(struct folio *folio)
{
	long i;

	for (i = 0; i < folio_nr_pages(folio); i++)
		if (!page_is_zero(folio_page(folio, i)))
			return false;
	return true;
}

/*
 * A private mapping of an MFD_HUGETLB memfd showing at @addr the memfd's
 * huge page @folio, present but all zeros: refused.  The restored memfd
 * leaves zeros out (a hole), over which the mapping would make a private
 * zero page of its own on its next fault, and no longer show what is
 * written to the memfd there afterwards (as the original does).
 */
static int refuse_zero_memfd_page(struct dump_image *img,
				  struct vm_area_struct *vma,
				  unsigned long addr, struct folio *folio)
{
	if (!folio_is_zero(folio))
		return 0;
	dump_refuse(img, task_pid_nr(img->task),
		    "private mapping at %#lx of %s (MFD_HUGETLB) shows at %#lx a huge page of the memfd (offset %#llx) that is present but all zeros: a restored memfd would have a hole there, and the mapping would stop showing the memfd's later writes; not supported",
		    vma->vm_start, vma->vm_file->f_path.dentry->d_name.name,
		    addr, (unsigned long long)hugetlb_file_pos(vma, addr));
	return -EOPNOTSUPP;
}

/*
 * A private mapping of an MFD_HUGETLB memfd: whether the memfd has the
 * huge page the mapping shows at @addr where it has no copy of its own.
 */
static bool hugetlb_has_page(struct vm_area_struct *vma, unsigned long addr)
{
	return xa_load(&vma->vm_file->f_mapping->i_pages,
		       imgcr_hugetlb_index(hstate_vma(vma),
					   hugetlb_file_pos(vma, addr)));
}

/*
 * A private mapping of an MFD_HUGETLB memfd without an anon_vma has no
 * copy of its own (hugetlb's copies always prepare one): it shows every
 * huge page the memfd has, and the image carries none.  The memfd's page
 * cache is looked at instead of faulting all of it into the task; one all
 * zeros is refused (refuse_zero_memfd_page()).
 */
static int check_memfd_pages(struct dump_image *img,
			     struct vm_area_struct *vma)
{
	struct hstate *h = hstate_vma(vma);
	loff_t first = hugetlb_file_pos(vma, vma->vm_start);
	pgoff_t idx = imgcr_hugetlb_index(h, first);
	pgoff_t last = imgcr_hugetlb_index(h, hugetlb_file_pos(vma, vma->vm_end - 1));
	struct folio_batch fbatch;
	unsigned int i, n;
	int ret = 0;

	folio_batch_init(&fbatch);
	while (!ret && (n = filemap_get_folios(vma->vm_file->f_mapping, &idx,
					       last, &fbatch))) {
		for (i = 0; i < n && !ret; i++) {
			struct folio *folio = fbatch.folios[i];
			loff_t pos = imgcr_hugetlb_pos(h, folio->index);

			if (pos >= first && pos - first < vma->vm_end - vma->vm_start)
				ret = refuse_zero_memfd_page(img, vma,
							     vma->vm_start + (pos - first),
							     folio);
		}
		folio_batch_release(&fbatch);
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
		cond_resched();
	}
	return ret;
}

/*
 * Anonymous memory: every page but those still all zero, which read back
 * the same from a fresh mapping (a transparent huge page makes a whole 2 MiB
 * present for one byte written; mlock(), MAP_POPULATE and
 * MADV_POPULATE_WRITE make every small page present unwritten).  The test
 * stops at the first word that is not zero: on a page of data it costs
 * one cache line.  Private file mappings: the pages the task has written
 * (copy-on-write copies); the others come from the file.
 */
static bool wanted_page(bool anon_vma, struct page *page)
{
	if (anon_vma)
		return !page_is_zero(page);
	return PageAnon(page);
}

/* Pages handed to GUP at once, straight into dump_image.pages. */
#define GUP_CHUNK 1024

/*
 * A private mapping of shared memory (a memfd): whether the object has a
 * page or a swap entry at @addr.  Only there may GUP fault: on a hole
 * shmem_fault() would allocate a page in the object (the dump would fill
 * every hole of a sparse memfd, and change it).
 */
static bool shmem_has_entry(struct vm_area_struct *vma, unsigned long addr)
{
	return xa_load(&vma->vm_file->f_mapping->i_pages,
		       linear_page_index(vma, addr));
}

/*
 * Pin the pages of @vma that the image must carry (see wanted_page()).  A
 * VMA without an anon_vma has never had such a page.  GUP puts each batch
 * at the end of dump_image.pages, and the pages kept move down over the
 * ones let go.
 *
 * A private mapping of shared memory needs only the task's own pages (the
 * copy-on-write copies); the object comes back from the memfd, restored
 * apart.  GUP runs there with FOLL_NOFAULT, which takes the pages mapped;
 * where that fails it faults only over a page or swap entry of the object
 * (mapping it or reading back a swapped-out copy, never allocating).  Not
 * seen: a copy swapped out over a hole punched in the object afterwards
 * (FALLOC_FL_PUNCH_HOLE keeps copies); no interface short of a page
 * table walk tells it from a hole.
 */
int dump_vma_pages(struct dump_image *img, struct vm_area_struct *vma)
{
	bool anon = vma_is_anonymous(vma);
	/* anonymous huge pages: as anonymous memory, shared ones too */
	bool hugetlb = is_vm_hugetlb_page(vma);
	bool shmem = !anon && !hugetlb && vma->vm_file &&
		     shmem_file(vma->vm_file);
	/*
	 * but a private mapping of an MFD_HUGETLB memfd: its copy-on-write
	 * copies, each whole (the loader writes them over the memfd's
	 * pages, which a zero page left out would show)
	 */
	bool cow_only = hugetlb && !(vma->vm_flags & VM_MAYSHARE) &&
			strcmp(vma->vm_file->f_path.dentry->d_name.name,
			       IMGCR_HUGETLB_ANON_FILE);
	unsigned int gup_flags = FOLL_FORCE | FOLL_DUMP;
	unsigned long addr = vma->vm_start;
	struct page **batch;
	long n, i;
	int ret;

	if (shmem)
		gup_flags |= FOLL_NOFAULT;

	if (!vma->anon_vma && !hugetlb)
		return 0;
	if (!vma->anon_vma && cow_only)
		return check_memfd_pages(img, vma);
	img->new_run = true;	/* a PT_LOAD never spans two VMAs */
	/* not what imgcr dump --live copies ahead (dump_skip_page()) */
	img->run_anon = anon;
	while (addr < vma->vm_end) {
		n = min_t(unsigned long, GUP_CHUNK,
			  (vma->vm_end - addr) >> PAGE_SHIFT);
		ret = grow((void **)&img->pages, &img->cap_pages,
			   img->nr_pages + n, sizeof(*img->pages));
		if (ret)
			return ret;
		batch = img->pages + img->nr_pages;
		/*
		 * FOLL_DUMP: holes and the zero page fail instead of faulting.
		 * It does not look at VM_DONTDUMP (the core dumper's
		 * vma_dump_size() does): MADV_DONTDUMP pages are in the image.
		 */
		n = imgcr_gup_remote(img->mm, addr, n, gup_flags, batch);
		if (n <= 0 && shmem && shmem_has_entry(vma, addr))
			n = imgcr_gup_remote(img->mm, addr, 1,
					     FOLL_FORCE | FOLL_DUMP, batch);
		if (n < 0 && n != -EFAULT) {
			/*
			 * not a hole: a page that could not be read (no
			 * memory to swap it in, a hardware-poisoned page...)
			 * would come back as zeros
			 */
			if (fatal_signal_pending(current))
				return -EINTR;
			dump_refuse(img, task_pid_nr(img->task),
				    "cannot read its page at %#lx (%ld): it would come back as zeros",
				    addr, n);
			return n;
		}
		if (n == -EFAULT && cow_only && hugetlb_has_page(vma, addr)) {
			/*
			 * not a hole: the fault refused to show the memfd's
			 * page (its copy lost to a failed copy-on-write in
			 * the parent after fork(), HPAGE_RESV_UNMAPPED: the
			 * task gets SIGBUS there), or a copy that could not
			 * be read: restored, the memfd's page would show
			 */
			dump_refuse(img, task_pid_nr(img->task),
				    "private mapping at %#lx of %s (MFD_HUGETLB): cannot read its page at %#lx, over a huge page of the memfd (offset %#llx) that it would show after a restore (its copy lost to a failed copy-on-write after fork(), or unreadable); not supported",
				    vma->vm_start,
				    vma->vm_file->f_path.dentry->d_name.name, addr,
				    (unsigned long long)hugetlb_file_pos(vma, addr));
			return n;
		}
		if (n <= 0) {	/* a hole or the zero page (FOLL_DUMP): skip it */
			/*
			 * a hugetlb hole is a whole huge page (FOLL_DUMP):
			 * 4 KiB steps over a huge MAP_NORESERVE mapping would
			 * take hours (and 6.1's GUP never reschedules there)
			 */
			if (hugetlb)
				addr = ALIGN(addr + 1, vma_kernel_pagesize(vma));
			else
				addr += PAGE_SIZE;
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
			continue;
		}
		ret = 0;
		for (i = 0; i < n; i++) {
			struct page *page = batch[i];
			bool keep = !ret && wanted_page((anon || hugetlb) &&
						   !cow_only, page);

			/* the memfd's own page: once per huge page */
			if (!ret && cow_only && !PageAnon(page) &&
			    IS_ALIGNED(addr + i * PAGE_SIZE, SZ_2M))
				ret = refuse_zero_memfd_page(img, vma,
							     addr + i * PAGE_SIZE,
							     page_folio(page));

			if (keep)
				ret = dump_run_at(img, addr + i * PAGE_SIZE);
			if (!keep || ret) {
				put_page(page);
				continue;
			}
			/* at or below batch + i: the pages kept move down */
			img->pages[img->nr_pages++] = page;
			img->runs[img->nr_runs - 1].npages++;
		}
		if (ret)
			return ret;
		addr += n * PAGE_SIZE;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/*
 * Pin the pages of a shared memory object that @vma maps, straight from
 * the object: a hole there must stay a hole (a GUP would fault one in),
 * and a swapped-out page must be read back.
 */
int dump_shmem_pages(struct dump_image *img, struct vm_area_struct *vma)
{
	struct address_space *mapping = vma->vm_file->f_mapping;
	unsigned long first = vma->vm_pgoff;
	unsigned long last = first + vma_pages(vma) - 1;
	unsigned long idx = first;
	struct page *page;
	int ret;

	img->new_run = true;
	img->run_anon = false;
	while (idx <= last) {
		if (!xa_find(&mapping->i_pages, &idx, last, XA_PRESENT))
			break;
		page = shmem_read_mapping_page_gfp(mapping, idx, GFP_KERNEL);
		if (IS_ERR(page))
			return PTR_ERR(page);
		if (page_is_zero(page)) {
			put_page(page);
		} else {
			ret = add_page(img, vma->vm_start +
				       ((idx - first) << PAGE_SHIFT), page);
			if (ret) {
				put_page(page);
				return ret;
			}
		}
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
		idx++;
	}
	return 0;
}

/* A failed read or write: sticky, and said once if the task ran. */
static int dump_fail(struct dump_image *img, int err)
{
	WRITE_ONCE(img->error, err);
	if (err == -EAGAIN)
		pr_info_ratelimited(IMGCR_DUMP_NAME ": pid %d ran during the dump; image discarded\n",
				    task_pid_nr(img->task));
	return err;
}

ssize_t dump_read_img(struct dump_image *img, char __user *buf,
		      size_t count, loff_t *ppos)
{
	loff_t pos = *ppos;
	loff_t size = img->head_len + (loff_t)img->nr_pages * PAGE_SIZE;
	size_t done = 0;
	int err;

	err = READ_ONCE(img->error);
	if (!err && !dump_unchanged(img))
		err = -EAGAIN;
	if (err)
		goto fail;

	while (done < count && pos < size) {
		size_t n;
		unsigned long left;

		if (pos < img->head_len) {
			n = min_t(size_t, count - done, img->head_len - pos);
			left = copy_to_user(buf + done, img->head + pos, n);
		} else {
			loff_t rel = pos - img->head_len;
			struct page *page = img->pages[rel >> PAGE_SHIFT];
			size_t off = rel & ~PAGE_MASK;
			void *kaddr;

			n = min_t(size_t, count - done, PAGE_SIZE - off);
			kaddr = kmap_local_page(page);
			left = copy_to_user(buf + done, kaddr + off, n);
			kunmap_local(kaddr);
		}
		n -= left;
		done += n;
		pos += n;
		if (left) {
			if (!done)
				return -EFAULT;
			break;
		}
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	/* The task ran while we copied: what was copied may be torn. */
	if (!dump_unchanged(img)) {
		err = -EAGAIN;
		goto fail;
	}
	*ppos = pos;
	return done;
fail:
	return dump_fail(img, err);
}

/* Pages of the image left out of a write (IMGCR_IOC_DUMP_TO_SKIP). */
struct dump_skip {
	const struct imgcr_range *r;
	size_t nr;
	size_t cur;		/* the first range that may hold the next page */
	u64 skipped;
};

/*
 * Whether the page at @addr is left out; addresses come in rising order.
 * Only pages of private anonymous mappings are (what imgcr dump --live
 * copies ahead): a shared or file page always comes from here.
 */
static bool dump_skip_page(struct dump_skip *sk, const struct dump_run *run,
			   unsigned long addr)
{
	if (!sk || !run->anon)
		return false;
	while (sk->cur < sk->nr && sk->r[sk->cur].end <= addr)
		sk->cur++;
	if (sk->cur == sk->nr || sk->r[sk->cur].start > addr)
		return false;
	sk->skipped++;
	return true;
}

/* Write @n pages of @bv at *@pos; a short write is retried. */
static int dump_write_batch(struct file *out, struct bio_vec *bv, size_t n,
			    loff_t *pos)
{
	struct iov_iter it;
	ssize_t w;

	iov_iter_bvec(&it, ITER_SOURCE, bv, n, n * PAGE_SIZE);
	while (iov_iter_count(&it)) {
		/* advances @it by what it wrote */
		w = imgcr_iter_write(out, &it, pos);
		if (w <= 0)
			return w ? w : -EIO;
	}
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

/* Pages written at once (2 MiB): one vfs_iter_write() each. */
#define WRITE_BATCH 512

/* The pages of the image to @out at *@pos, through @bv (WRITE_BATCH). */
static int dump_write_pages(struct dump_image *img, struct file *out,
			    loff_t *pos, struct dump_skip *sk,
			    struct bio_vec *bv)
{
	size_t r, i, n = 0;
	int err;

	for (r = 0; r < img->nr_runs; r++) {
		const struct dump_run *run = &img->runs[r];

		for (i = 0; i < run->npages; i++) {
			if (dump_skip_page(sk, run, run->vaddr + i * PAGE_SIZE)) {
				err = n ? dump_write_batch(out, bv, n, pos) : 0;
				if (err)
					return err;
				n = 0;
				*pos += PAGE_SIZE;
				if (sk->skipped % GUP_BATCH)
					continue;
				if (fatal_signal_pending(current))
					return -EINTR;
				cond_resched();
				continue;
			}
			bv[n].bv_page = img->pages[run->first + i];
			bv[n].bv_len = PAGE_SIZE;
			bv[n].bv_offset = 0;
			if (++n == WRITE_BATCH) {
				err = dump_write_batch(out, bv, n, pos);
				if (err)
					return err;
				n = 0;
			}
		}
	}
	return n ? dump_write_batch(out, bv, n, pos) : 0;
}

/*
 * Write the image to @out at *@pos: the header, then the pinned pages in
 * batches as an ITER_BVEC, copied once, into the file's page cache.  A
 * short write is retried, so a full disk gives its own error (ENOSPC).
 * The pages @sk lists are passed over (NULL: none).
 */
static int dump_write_image(struct dump_image *img, struct file *out,
			    loff_t *pos, struct dump_skip *sk)
{
	struct bio_vec *bv;
	ssize_t w;
	size_t done;
	int err;

	for (done = 0; done < img->head_len; done += w) {
		w = kernel_write(out, img->head + done, img->head_len - done, pos);
		if (w <= 0)
			return w ? w : -EIO;
	}
	bv = kmalloc_array(WRITE_BATCH, sizeof(*bv), GFP_KERNEL);
	if (!bv)
		return -ENOMEM;
	err = dump_write_pages(img, out, pos, sk, bv);
	kfree(bv);
	return err;
}

/*
 * A target the writes go to as given: a regular file with ->write_iter
 * (no pseudo-file with only ->write), not O_APPEND or O_DIRECT (the header
 * is a kernel buffer), and none of the files whose pages are in the image.
 */
static int dump_check_target(struct dump_image *img, struct file *out)
{
	struct inode *inode = file_inode(out);
	size_t i;

	if (!(out->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!S_ISREG(inode->i_mode) || !out->f_op->write_iter ||
	    !(out->f_mode & FMODE_CAN_WRITE) ||
	    out->f_flags & (O_APPEND | O_DIRECT))
		return -EINVAL;
	for (i = 0; i < img->nr_files; i++)
		if (file_inode(img->files[i]) == inode)
			return -EINVAL;
	return 0;
}

/*
 * The ranges of IMGCR_IOC_DUMP_TO_SKIP, copied in and checked: sorted,
 * page-aligned, each non-empty, none overlapping the next.
 */
static int dump_get_skip(struct dump_skip *sk, u64 uptr, u64 nr)
{
	struct imgcr_range *r;
	size_t i;

	if (!nr || nr > IMGCR_MAX_SKIP_RANGES)
		return -EINVAL;
	r = kvmalloc_array(nr, sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	if (copy_from_user(r, u64_to_user_ptr(uptr), nr * sizeof(*r))) {
		kvfree(r);
		return -EFAULT;
	}
	for (i = 0; i < nr; i++)
		if (!PAGE_ALIGNED(r[i].start) || !PAGE_ALIGNED(r[i].end) ||
		    r[i].start >= r[i].end ||
		    (i && r[i].start < r[i - 1].end)) {
			kvfree(r);
			return -EINVAL;
		}
	sk->r = r;
	sk->nr = nr;
	return 0;
}

long dump_ioctl_dump_to(struct dump_image *img, void __user *uarg,
			bool with_skip)
{
	struct imgcr_dump_to_skip arg = {};
	struct dump_skip skip = {}, *sk = NULL;
	size_t size = with_skip ? sizeof(arg) : sizeof(arg.to);
	loff_t pos;
	struct fd out;
	int err;

	if (copy_from_user(&arg, uarg, size))
		return -EFAULT;
	if (arg.to.flags || arg.to.offset > MAX_LFS_FILESIZE)
		return -EINVAL;
	err = READ_ONCE(img->error);
	if (!err && !dump_unchanged(img))
		err = -EAGAIN;
	if (err)
		goto fail;
	if (with_skip) {
		err = dump_get_skip(&skip, arg.ranges, arg.nr_ranges);
		if (err)
			return err;
		sk = &skip;
	}
	out = fdget(arg.to.fd);
	if (!fd_file(out)) {
		err = -EBADF;
		goto out;
	}
	err = dump_check_target(img, fd_file(out));
	if (err) {
		fdput(out);
		goto out;
	}
	pos = arg.to.offset;
	err = dump_write_image(img, fd_file(out), &pos, sk);
	fdput(out);
	if (err)
		goto out;
	/* The task ran while we wrote: what was written may be torn. */
	if (!dump_unchanged(img)) {
		err = -EAGAIN;
		goto fail;
	}
	arg.to.written = pos - arg.to.offset;
	arg.skipped = skip.skipped;
	if (copy_to_user(uarg, &arg, size))
		err = -EFAULT;
out:
	kvfree(skip.r);
	return err;
fail:
	kvfree(skip.r);
	return dump_fail(img, err);
}

/*
 * IMGCR_IOC_PRECOPY: the pinned pages of private anonymous mappings in
 * [start, end), copied out as they are now, even after the task ran: a
 * page moved elsewhere by mremap() meanwhile is still the page pinned at
 * open(), which the caller can tell by its frame at its next freeze.
 */
long dump_ioctl_precopy(struct dump_image *img, void __user *uarg)
{
	struct imgcr_precopy arg;
	unsigned long va, lo, hi, rs, re;
	u64 copied = 0;
	size_t r;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.pad || !PAGE_ALIGNED(arg.start) ||
	    !PAGE_ALIGNED(arg.end) || arg.start >= arg.end ||
	    arg.end > TASK_SIZE_MAX)
		return -EINVAL;
	for (r = 0; r < img->nr_runs; r++) {
		const struct dump_run *run = &img->runs[r];

		rs = run->vaddr;
		re = run->vaddr + run->npages * PAGE_SIZE;
		if (!run->anon || re <= arg.start || rs >= arg.end)
			continue;
		lo = max_t(unsigned long, rs, arg.start);
		hi = min_t(unsigned long, re, arg.end);
		for (va = lo; va < hi; va += PAGE_SIZE) {
			struct page *page = img->pages[run->first + (va - rs) / PAGE_SIZE];
			u64 off = va - arg.start;
			void *kaddr = kmap_local_page(page);
			unsigned long left;

			left = copy_to_user(u64_to_user_ptr(arg.buf + off), kaddr,
					    PAGE_SIZE);
			kunmap_local(kaddr);
			if (left ||
			    put_user(1, (u8 __user *)u64_to_user_ptr(arg.status +
								     off / PAGE_SIZE)))
				return -EFAULT;
			if (++copied % GUP_BATCH)
				continue;
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	arg.copied = copied;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		return -EFAULT;
	return 0;
}
