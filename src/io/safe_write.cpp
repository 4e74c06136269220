#include "io/safe_write.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"
#include "io/json_reader.hpp"

namespace ridgeline::io {

namespace {

std::string cause(int error) { return std::strerror(error); }

// Removes the temporary file unless it was renamed into place.
class Temporary {
public:
    explicit Temporary(std::string name) : name_(std::move(name)) {}
    ~Temporary() {
        if (!kept_) (void)::unlink(name_.c_str());
    }
    Temporary(const Temporary&) = delete;
    Temporary& operator=(const Temporary&) = delete;
    void keep() { kept_ = true; }
    [[nodiscard]] const std::string& name() const { return name_; }

private:
    std::string name_;
    bool kept_ = false;
};

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           const std::function<void(const std::filesystem::path&)>& check) {
    const std::string origin = path.string();
    // Renaming over a device or FIFO would replace the node itself (/dev/full becoming a file).
    struct stat target {};
    if (::stat(origin.c_str(), &target) == 0 && !S_ISREG(target.st_mode))
        throw InputError(origin, "", "not a regular file (a device, FIFO or folder): results are written to files only");
    if (was_read_as_input(path)) throw InputError(origin, "", "is one of this command's inputs: a result never replaces what it was computed from");
    const std::filesystem::path folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    std::string pattern = (folder / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);  // O_CREAT | O_EXCL: never an existing file or link
    if (fd < 0) {
        const int error = errno;
        throw InputError(origin, "", "cannot create a temporary file in " + folder.string() + ": " + cause(error));
    }
    Temporary temporary(name.data());
    // mkostemp makes the file private (0600); the result gets what a plain open would have given:
    // the mode of the file it replaces, or 0666 less the umask.
    struct stat existing {};
    mode_t mode = 0;
    if (::stat(path.c_str(), &existing) == 0) {
        mode = existing.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    (void)::fchmod(fd, mode);
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int error = errno;
            (void)::close(fd);
            throw InputError(origin, "", "cannot write the temporary file " + temporary.name() + ": " + cause(error));
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
        const int error = errno;
        (void)::close(fd);
        throw InputError(origin, "", "cannot flush the temporary file to disk: " + cause(error));
    }
    if (::close(fd) != 0) {
        const int error = errno;
        throw InputError(origin, "", "cannot close the temporary file: " + cause(error));
    }
    if (check) check(temporary.name());
    if (::rename(temporary.name().c_str(), origin.c_str()) != 0) {
        const int error = errno;
        throw InputError(origin, "", "cannot replace the file: " + cause(error));
    }
    temporary.keep();
    // The rename itself reaches the disk with the folder.
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        (void)::fsync(dir);
        (void)::close(dir);
    }
}

}  // namespace ridgeline::io
