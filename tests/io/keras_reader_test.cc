// Tests of the Keras fit-output reader on lines quoted from published logs
// (each test names its source). Where a log was published without its
// progress-bar redraws (copied from a notebook), the redraws are rebuilt the way
// the Progbar class writes them ('\b' x width, then '\r'; Keras 3 adds ANSI
// colour codes): keras/utils/generic_utils.py (Keras 2),
// tensorflow/python/keras/utils/generic_utils.py (tf.keras 2.x) and
// keras/src/utils/progbar.py (Keras 3). Expected numbers are worked by hand in
// the comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"
#include "io/readers.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

const char kSourceKeras[] = "fit.log";

std::vector<Sample> ReadKeras(std::string_view text, const Attributes& attributes = {},
                              int skip_first_epochs = 1) {
  const std::string source = kSourceKeras;
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return io::ReadKeras(text, io::ReaderContext{source, attributes, options});
}

std::string ErrorOfKeras(std::string_view text, const Attributes& attributes = {},
                         int skip_first_epochs = 1) {
  return testing::DataErrorOf([&] { ReadKeras(text, attributes, skip_first_epochs); });
}

Attributes BatchKeras(double batch) {
  Attributes a;
  a.batch = batch;
  return a;
}

// keras-team/keras#10506 (Keras 2, fit_generator, verbose 1), first three epochs.
const char kFitGenerator[] =
    "Epoch 1/100\n"
    "423/423 [==============================] - 192s 454ms/step - loss: 1.8386 - "
    "mean_squared_error: 0.0049 - acc: 0.6136\n"
    "Epoch 2/100\n"
    "423/423 [==============================] - 186s 439ms/step - loss: 1.8087 - "
    "mean_squared_error: 0.0043 - acc: 0.6201\n"
    "Epoch 3/100\n"
    "423/423 [==============================] - 184s 436ms/step - loss: 1.3863 - "
    "mean_squared_error: 0.0037 - acc: 0.6445\n";

TEST(KerasReader, Keras2VerboseOneUsesTheMorePreciseTime) {
  const std::vector<Sample> samples = ReadKeras(kFitGenerator, BatchKeras(32));
  // Epoch 1 (compilation) is dropped by skip_first_epochs = 1.
  ASSERT_EQ(samples.size(), 2u);
  // "186s 439ms/step": 186 +- 0.5 s is 0.27% uncertain, 439 +- 0.5 ms 0.11%, so
  // the epoch time is 0.439 s x 423 steps = 185.697 s.
  EXPECT_EQ(samples[0].epoch, 2);
  EXPECT_EQ(samples[0].line, 4);
  EXPECT_NEAR(*samples[0].epoch_time_s, 185.697, 1e-9);
  // 423 steps of the batch of 32 = 13536 samples.
  EXPECT_EQ(samples[0].samples_per_epoch, 13536);
  // Epoch 3: 0.436 x 423 = 184.428 s.
  EXPECT_EQ(samples[1].epoch, 3);
  EXPECT_EQ(samples[1].line, 6);
  EXPECT_NEAR(*samples[1].epoch_time_s, 184.428, 1e-9);
  EXPECT_FALSE(samples[1].throughput_sps.has_value());
  EXPECT_FALSE(samples[1].step_time_s.has_value());
}

TEST(KerasReader, SkipFirstEpochsDecidesWhichEpochsStay) {
  const std::vector<Sample> all = ReadKeras(kFitGenerator, BatchKeras(32), 0);
  ASSERT_EQ(all.size(), 3u);
  // Epoch 1, "192s 454ms/step": 0.454 x 423 = 192.042 s.
  EXPECT_EQ(all[0].epoch, 1);
  EXPECT_NEAR(*all[0].epoch_time_s, 192.042, 1e-9);
  EXPECT_EQ(ReadKeras(kFitGenerator, BatchKeras(32), 2).size(), 1u);
}

TEST(KerasReader, AllWarmUpEpochsAreReadWithAWarning) {
  // Every epoch is <= skip_first_epochs: what is certain (the epoch times) is
  // read, with a warning that it includes the warm-up, instead of a refusal.
  ReadOptions options;
  options.skip_first_epochs = 3;
  const testing::ReadResult read =
      testing::ReadWith(io::ReadKeras, kFitGenerator, kSourceKeras, BatchKeras(32), options);
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_EQ(read.samples[0].epoch, 1);
  EXPECT_NEAR(*read.samples[0].epoch_time_s, 192.042, 1e-9);  // 0.454 s x 423
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0],
              HasSubstr("fit.log:6: every epoch in the log (3) is <= skip_first_epochs = 3, so "
                        "they are read anyway"));
  // A one-epoch log, as a one-epoch benchmark writes it.
  const testing::ReadResult one = testing::ReadWith(
      io::ReadKeras, "Epoch 1/1\n423/423 [======] - 192s 454ms/step - loss: 1.8\n", kSourceKeras,
      BatchKeras(32));
  ASSERT_EQ(one.samples.size(), 1u);
  EXPECT_EQ(one.warnings.size(), 1u);
}

// The tf.keras 2.x redraws of epoch 2 of kFitGenerator on one editor line:
// two bars in progress, the unfinished bar at 423/423 (still with an ETA), then
// the final bar; each erased with '\b' and '\r'.
TEST(KerasReader, RedrawsOnOneLineKeepTheLastCompleteBar) {
  const std::string erase(8, '\b');
  const std::string text =
      "Epoch 1/100\n"
      "423/423 [==============================] - 192s 454ms/step - loss: 1.8386\n"
      "Epoch 2/100\n"
      "  1/423 [..............................] - ETA: 3:05 - loss: 1.9021" +
      erase + "\r" + "212/423 [==============>...............] - ETA: 1:32 - loss: 1.8420" + erase +
      "\r" + "423/423 [==============================] - ETA: 0s - loss: 1.8087" + erase + "\r" +
      "423/423 [==============================] - 186s 439ms/step - loss: 1.8087\n"
      "Epoch 3/100\n"
      "  1/423 [..............................] - ETA: 3:01 - loss: 1.4120" +
      erase + "\r" + "423/423 [==============================] - 184s 436ms/step - loss: 1.3863\n";
  const std::vector<Sample> samples = ReadKeras(text, BatchKeras(32));
  ASSERT_EQ(samples.size(), 2u);
  // Line numbers count '\n' only: the redraws of epoch 2 are all on line 4.
  EXPECT_EQ(samples[0].line, 4);
  EXPECT_NEAR(*samples[0].epoch_time_s, 0.439 * 423, 1e-9);
  EXPECT_EQ(samples[1].line, 6);
  EXPECT_NEAR(*samples[1].epoch_time_s, 0.436 * 423, 1e-9);
}

TEST(KerasReader, AnEpochThatNeverFinishesGivesNoSample) {
  // kFitGenerator cut in epoch 4 (training interrupted): only an ETA bar.
  const std::string text = std::string(kFitGenerator) +
                           "Epoch 4/100\n"
                           "212/423 [==============>...............] - ETA: 1:32 - loss: 1.2\n";
  EXPECT_EQ(ReadKeras(text, BatchKeras(32)).size(), 2u);
}

// Keras 3 lines from keras-team/keras-io, examples/keras_rs/md/basic_ranking.md
// (model.fit(train_ratings, epochs=5)), with Keras 3's ANSI codes and, in
// epoch 2, redraws rebuilt after keras/src/utils/progbar.py: the unfinished bar
// at 80/80 shows its ETA ("0s") where the final one shows the elapsed time.
TEST(KerasReader, Keras3BarsWithAnsiCodes) {
  const std::string bar = "\x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m";
  const std::string empty_bar = "\x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m";
  const std::string erase(12, '\b');
  const std::string text =
      "Epoch 1/5\n"
      "\x1b[1m80/80\x1b[0m " +
      bar +
      " \x1b[1m4s\x1b[0m 10ms/step - loss: 0.1071 - "
      "root_mean_squared_error: 0.3218\n"
      "Epoch 2/5\n"
      "\x1b[1m 1/80\x1b[0m " +
      empty_bar + " \x1b[1m2s\x1b[0m 30ms/step - loss: 0.0790" + erase + "\r" +
      "\x1b[1m80/80\x1b[0m " + bar + " \x1b[1m0s\x1b[0m 2ms/step - loss: 0.0769" + erase + "\r" +
      "\x1b[1m80/80\x1b[0m " + bar +
      " \x1b[1m1s\x1b[0m 3ms/step - loss: 0.0769 - "
      "root_mean_squared_error: 0.2773\n"
      "Epoch 3/5\n"
      "\x1b[1m80/80\x1b[0m " +
      bar +
      " \x1b[1m0s\x1b[0m 2ms/step - loss: 0.0745 - "
      "root_mean_squared_error: 0.2730\n";
  const std::vector<Sample> samples = ReadKeras(text, BatchKeras(64));
  ASSERT_EQ(samples.size(), 2u);
  // Epoch 2, final bar "1s 3ms/step": 1 +- 0.5 s (50%) against 3 +- 0.5 ms (17%),
  // so 0.003 s x 80 = 0.24 s (the unfinished "2ms/step" bar would give 0.16 s).
  EXPECT_EQ(samples[0].epoch, 2);
  EXPECT_EQ(samples[0].line, 4);
  EXPECT_NEAR(*samples[0].epoch_time_s, 0.24, 1e-12);
  EXPECT_EQ(samples[0].samples_per_epoch, 80 * 64);
  // Epoch 3, "0s 2ms/step": the elapsed time rounds to 0 s; 0.002 x 80 = 0.16 s.
  EXPECT_NEAR(*samples[1].epoch_time_s, 0.16, 1e-12);
}

// Keras 3 output published in a tutorial (build_model.py, found by text
// search): an evaluate() bar before and after fit(), with validation metrics
// on the final bars.
TEST(KerasReader, EvaluateBarsAroundFitAreNotEpochs) {
  const char text[] =
      "313/313 ━━━━━━━━━━━━━━━━━━━━ 0s 301us/step - accuracy: 0.0778 - loss: 2.3594\n"
      "Initial cost: 2.3634371757507324, Initial accuracy: 0.07209999859333038\n"
      "Epoch 1/3\n"
      "1688/1688 ━━━━━━━━━━━━━━━━━━━━ 2s 822us/step - accuracy: 0.8730 - loss: 0.4257 - "
      "val_accuracy: 0.9687 - val_loss: 0.1058\n"
      "Epoch 2/3\n"
      "1688/1688 ━━━━━━━━━━━━━━━━━━━━ 1s 812us/step - accuracy: 0.9666 - loss: 0.1089 - "
      "val_accuracy: 0.9685 - val_loss: 0.0976\n"
      "Epoch 3/3\n"
      "1688/1688 ━━━━━━━━━━━━━━━━━━━━ 1s 809us/step - accuracy: 0.9799 - loss: 0.0667 - "
      "val_accuracy: 0.9758 - val_loss: 0.0775\n"
      "313/313 ━━━━━━━━━━━━━━━━━━━━ 0s 308us/step - accuracy: 0.9706 - loss: 0.0943\n"
      "Final cost: 0.08249370753765106, Final accuracy: 0.9742000102996826\n";
  const std::vector<Sample> samples = ReadKeras(text, BatchKeras(32));
  ASSERT_EQ(samples.size(), 2u);
  // 812 us x 1688 = 1.370656 s; 809 us x 1688 = 1.365592 s (the evaluate bar
  // after it, 308 us x 313, is not epoch 3).
  EXPECT_EQ(samples[0].line, 6);
  EXPECT_NEAR(*samples[0].epoch_time_s, 1.370656, 1e-12);
  EXPECT_EQ(samples[1].line, 8);
  EXPECT_NEAR(*samples[1].epoch_time_s, 1.365592, 1e-12);
  EXPECT_EQ(samples[1].samples_per_epoch, 1688 * 32);
}

// tf.keras 2.x verbose=2 from JesperDramsch/keras-complex#22, with the
// TensorFlow log line that was printed inside epoch 1.
const char kVerbose2[] =
    "Epoch 1/20\n"
    "2023-06-30 10:32:50.974378: I tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:424] "
    "Loaded cuDNN version 8900\n"
    "1079/1079 - 21s - loss: 0.2431 - 21s/epoch - 19ms/step\n"
    "Epoch 2/20\n"
    "1079/1079 - 10s - loss: 0.2135 - 10s/epoch - 10ms/step\n"
    "Epoch 3/20\n"
    "1079/1079 - 10s - loss: 0.2003 - 10s/epoch - 10ms/step\n"
    "Epoch 4/20\n"
    "1079/1079 - 10s - loss: 0.2163 - 10s/epoch - 10ms/step\n"
    "Epoch 5/20\n"
    "1079/1079 - 11s - loss: 0.2038 - 11s/epoch - 10ms/step\n";

TEST(KerasReader, TfKerasVerboseTwo) {
  const std::vector<Sample> samples = ReadKeras(kVerbose2, BatchKeras(32));
  ASSERT_EQ(samples.size(), 4u);
  // "10s ... 10ms/step": both 5% uncertain; a tie keeps the epoch time, 10 s.
  EXPECT_EQ(samples[0].epoch, 2);
  EXPECT_EQ(samples[0].line, 5);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 10);
  // "11s ... 10ms/step": 11 s is the more precise (4.5% against 5%).
  EXPECT_EQ(samples[3].epoch, 5);
  EXPECT_EQ(samples[3].line, 11);
  EXPECT_DOUBLE_EQ(*samples[3].epoch_time_s, 11);
  EXPECT_EQ(samples[3].samples_per_epoch, 1079 * 32);
}

TEST(KerasReader, EpochTimeInMillisecondsBeatsARoundedElapsedTime) {
  // tf.keras 2.x verbose=2 of a short epoch (ttukei/Twitter-language-models-
  // about-Ukraine, README, lines 19-20): "0s" is no time, "3ms/step" x 128 =
  // 0.384 s is 17% uncertain, "358ms/epoch" 0.14%: the epoch took 0.358 s.
  const char text[] =
      "Epoch 1/100\n"
      "128/128 - 5s - loss: 3.1494 - accuracy: 0.1463 - 5s/epoch - 43ms/step\n"
      "Epoch 2/100\n"
      "128/128 - 0s - loss: 2.9102 - accuracy: 0.1586 - 358ms/epoch - 3ms/step\n";
  const std::vector<Sample> samples = ReadKeras(text, BatchKeras(32));
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 0.358);
}

TEST(KerasReader, Keras3VerboseTwo) {
  // The Keras 3 verbose=2 line, "count - elapsed - time per step - metrics",
  // written by keras/src/utils/progbar.py; numbers from kVerbose2 epoch 2.
  const char text[] =
      "Epoch 1/2\n"
      "1079/1079 - 21s - 19ms/step - loss: 0.2431\n"
      "Epoch 2/2\n"
      "1079/1079 - 10s - 9ms/step - loss: 0.2135\n";
  const std::vector<Sample> samples = ReadKeras(text, BatchKeras(32));
  ASSERT_EQ(samples.size(), 1u);
  // 10 +- 0.5 s (5%) against 9 +- 0.5 ms (5.6%): the epoch time, 10 s.
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 10);
}

// tf.keras 1.x / 2.0-2.1 on arrays counts samples: "Train on 37800 samples"
// and "us/sample" (a Kaggle digit-recognizer write-up, TensorFlow 2.1).
TEST(KerasReader, PerSampleBarsCountSamples) {
  const char text[] =
      "Train on 37800 samples\n"
      "Epoch 1/20\n"
      "37800/37800 [==============================] - 39s 1ms/sample - loss: 0.1540 - "
      "accuracy: 0.9514\n"
      "Epoch 2/20\n"
      "37800/37800 [==============================] - 35s 920us/sample - loss: 0.0502 - "
      "accuracy: 0.9844\n"
      "Epoch 3/20\n"
      "37800/37800 [==============================] - 32s 856us/sample - loss: 0.0338 - "
      "accuracy: 0.9887\n";
  // No batch needed: the samples per epoch are the count itself.
  const std::vector<Sample> samples = ReadKeras(text);
  ASSERT_EQ(samples.size(), 2u);
  // 920 us x 37800 samples = 34.776 s; 856 us x 37800 = 32.3568 s.
  EXPECT_NEAR(*samples[0].epoch_time_s, 34.776, 1e-9);
  EXPECT_EQ(samples[0].samples_per_epoch, 37800);
  EXPECT_NEAR(*samples[1].epoch_time_s, 32.3568, 1e-9);
}

// Keras 2.1/2.2 on arrays also counts samples but names the unit "step"
// (https://pastebin.com/jJEF4uvZ, Dec 2017): "Train on 576 samples" decides.
TEST(KerasReader, TrainOnHeaderMakesStepUnitsPerSample) {
  const char text[] =
      "Train on 576 samples, validate on 144 samples\n"
      "Epoch 1/1000\n"
      "576/576 [==============================] - 185s 321ms/step - loss: 4.4855 - acc: 0.0208 - "
      "val_loss: 4.4852 - val_acc: 0.0000e+00\n"
      "Epoch 2/1000\n"
      "576/576 [==============================] - 173s 301ms/step - loss: 4.0745 - acc: 0.0208 - "
      "val_loss: 4.3584 - val_acc: 0.0000e+00\n";
  const std::vector<Sample> samples = ReadKeras(text, BatchKeras(32));
  ASSERT_EQ(samples.size(), 1u);
  // 0.301 s per sample x 576 samples = 173.376 s, over 576 samples (not 576 x 32).
  EXPECT_NEAR(*samples[0].epoch_time_s, 173.376, 1e-9);
  EXPECT_EQ(samples[0].samples_per_epoch, 576);
}

// Keras 2.0-2.2 verbose=2 prints no counter, " - 233s - loss: ..." (the
// Progbar of keras/utils/generic_utils.py); the samples come from the header.
// Lines from a public MNIST CNN write-up (Keras 2.1 era, found by text search).
TEST(KerasReader, Keras2VerboseTwoWithoutCounter) {
  const char text[] =
      "I tensorflow/core/platform/cpu_feature_guard.cc:137] Your CPU supports instructions that "
      "this TensorFlow binary was not compiled to use: SSE4.1 SSE4.2 AVX AVX2 FMA\n"
      "Train on 60000 samples, validate on 10000 samples\n"
      "Epoch 1/10\n"
      " - 260s - loss: 0.2310 - acc: 0.9344 - val_loss: 0.0828 - val_acc: 0.9744\n"
      "Epoch 2/10\n"
      " - 233s - loss: 0.0737 - acc: 0.9781 - val_loss: 0.0465 - val_acc: 0.9842\n"
      "Epoch 3/10\n"
      " - 231s - loss: 0.0532 - acc: 0.9839 - val_loss: 0.0427 - val_acc: 0.9859\n";
  const std::vector<Sample> samples = ReadKeras(text);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 6);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 233);
  EXPECT_EQ(samples[0].samples_per_epoch, 60000);
  EXPECT_EQ(samples[1].line, 8);
  EXPECT_DOUBLE_EQ(*samples[1].epoch_time_s, 231);
}

TEST(KerasReader, SamplesAttributeDecidesTheStepsRule) {
  Attributes a = BatchKeras(32);
  // 13530 samples at batch 32: ceil(422.81) = 423 steps, as logged: last batch partial.
  a.samples_per_epoch = 13530;
  std::vector<Sample> samples = ReadKeras(kFitGenerator, a);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].steps_rule, StepsRule::kKeepPartial);
  EXPECT_FALSE(samples[0].samples_per_epoch.has_value());  // ParseSamples fills 13530
  // 13550 at batch 32: 423.44, so ceil = 424 and floor = 423: the remainder was dropped.
  a.samples_per_epoch = 13550;
  samples = ReadKeras(kFitGenerator, a);
  EXPECT_EQ(samples[0].steps_rule, StepsRule::kDropRemainder);
  // 20000 at batch 32 makes 625 steps either way, not 423.
  a.samples_per_epoch = 20000;
  EXPECT_THAT(ErrorOfKeras(kFitGenerator, a),
              HasSubstr("fit.log:2: field 'samples': the log shows 423 steps per epoch, but "
                        "samples=20000 at batch=32 makes 625 steps"));
}

TEST(KerasReader, ParseSamplesCompletesTheSamples) {
  Attributes a = BatchKeras(32);
  a.samples_per_epoch = 13530;
  const std::vector<Sample> samples = ParseSamples(kFitGenerator, kSourceKeras, a);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].batch, 32);
  EXPECT_EQ(samples[0].samples_per_epoch, 13530);
  // Without the batch the log cannot say how many samples 423 steps are.
  try {
    ParseSamples(kFitGenerator, kSourceKeras);
    ADD_FAILURE() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("fit.log:4: field 'batch'"));
  }
}

TEST(KerasReader, GarbageTimeInTheFinalBarIsADataError) {
  const char text[] =
      "Epoch 1/2\n"
      "423/423 [==============================] - 192s 454ms/step - loss: 1.8386\n"
      "Epoch 2/2\n"
      "423/423 [==============================] - 1x6s 439ms/step - loss: 1.8087\n";
  EXPECT_THAT(ErrorOfKeras(text, BatchKeras(32)),
              HasSubstr("fit.log:4: field 'time': expected a time such as '45s' or "
                        "'29ms/step' in the progress bar that ends epoch 2, got '1x6s'"));
}

TEST(KerasReader, TruncatedFinalBarIsADataError) {
  // The last line was cut after the bar: it reached 423/423 but has no time.
  const std::string text = std::string(kFitGenerator) +
                           "Epoch 4/100\n"
                           "423/423 [==============================] - \n";
  EXPECT_THAT(ErrorOfKeras(text, BatchKeras(32)),
              HasSubstr("fit.log:8: field 'epoch_time': the progress bar that ends epoch 4 "
                        "(header on line 7) shows no time above 0 s"));
}

TEST(KerasReader, NoEpochsGiveNoSamples) {
  // An evaluate() bar alone, and plain text.
  EXPECT_TRUE(
      ReadKeras("313/313 [==============================] - 1s 2ms/step - loss: 0.3\n").empty());
  EXPECT_TRUE(ReadKeras("Epoch 00003: val_loss improved from 0.2 to 0.1\n").empty());
}

TEST(KerasReader, Detection) {
  EXPECT_TRUE(io::LooksLikeKeras(kFitGenerator));
  EXPECT_TRUE(io::LooksLikeKeras(kVerbose2));
  EXPECT_EQ(DetectFormat(kFitGenerator), Format::kKeras);
  EXPECT_EQ(DetectFormat(kVerbose2), Format::kKeras);
  // An epoch list and a CSV are not Keras output.
  EXPECT_FALSE(io::LooksLikeKeras("1 45.2\n2 44.8\n"));
  EXPECT_FALSE(io::LooksLikeKeras("epoch,epoch_time_s\n1,45.2\n"));
  // A header without any bar, or bars without a header, are not enough.
  EXPECT_FALSE(io::LooksLikeKeras("Epoch 1/10\nsome text\n"));
  EXPECT_FALSE(io::LooksLikeKeras("313/313 [==============================] - 1s 2ms/step\n"));
  // timm and tf_cnn_benchmarks lines (see their tests) are not Keras output.
  EXPECT_FALSE(io::LooksLikeKeras(
      "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  863.22/s)  "
      "LR: 1.001e-02  Data: 0.053 (0.051)\n"));
  EXPECT_FALSE(io::LooksLikeKeras("10\timages/sec: 139.6 +/- 0.1 (jitter = 0.3)\t8.137\n"));
}

}  // namespace
}  // namespace fitspeed
